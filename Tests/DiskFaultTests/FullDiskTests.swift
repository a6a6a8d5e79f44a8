import Foundation
import LyceumTestSupport
import Testing

/// `lyceum serve` (durability `always`) on an 8 MiB tmpfs that the test fills: the tmpfs is
/// mounted in a private mount namespace (`unshare --mount`) that a holder process keeps alive
/// across restarts of serve (started in it by `nsenter`), so nothing of it is visible outside
/// and it disappears with the holder. The test reaches the files through `/proc/HOLDER/root`.
@Suite(.serialized) struct FullDiskTests {
    @Test func aFullDiskRefusesWritesWithStorageFullKeepsReadingAndResumesByItself() throws {
        let mountPoint = try TemporaryDirectory()
        defer { mountPoint.remove() }
        let namespace = try PrivateTmpfs(at: mountPoint.path, megabytes: 8)
        defer { namespace.stop() }
        let metricsPort = try freeLoopbackPorts(count: 1)
        let serve = try FaultyServe(
            dataDirectory: mountPoint.path, arguments: ["--durability", "always", "--metrics-port", String(metricsPort)],
            launcher: namespace.launcher)
        var acknowledged = Set<String>()
        for number in 0..<20 {
            let reply = try serve.call("books", createBook(learner: "ada", title: "Before \(number)", requestID: "before-\(number)"))
            try #require(reply.isOK, "create \(number): \(reply)")
            acknowledged.insert(try #require(reply.bookID))
        }

        let filled = try namespace.fill()
        // The journal's last page may still have room for a few records: they are written and
        // acknowledged as usual, until the first refusal.
        var slack = 0
        while slack < 100 {
            let reply = try serve.call("books", createBook(learner: "ada", title: "Slack \(slack)", requestID: "slack-\(slack)"))
            guard reply.isOK else { break }
            acknowledged.insert(try #require(reply.bookID))
            slack += 1
        }
        print("filled the tmpfs with \(filled) bytes; \(slack) creates still fitted in the journal's last page")
        var refusals = 0
        for number in 0..<50 {
            let reply = try serve.call("books", createBook(learner: "ada", title: "Refused \(number)", requestID: "refused-\(number)"))
            #expect(!reply.isOK, "a create was acknowledged on a full disk: \(reply)")
            #expect(reply.errorCode == "storage_full", "\(reply)")
            let message = reply.error["message"] as? String ?? ""
            #expect(!message.contains(mountPoint.path) && !message.contains("journal.jsonl"), "the reply names a server file: \(message)")
            if reply.errorCode == "storage_full" { refusals += 1 }
        }
        // Reads keep answering while writes are refused.
        #expect(try serve.bookIDs(of: "ada") == acknowledged)
        let catalog = try serve.call("catalog", #"{"op":"list_courses","limit":5}"#)
        #expect(catalog.isOK, "\(catalog)")

        let metrics = try ChildProcess.run("/usr/bin/curl", ["-sS", "http://127.0.0.1:\(metricsPort)/metrics"])
        let failures = metrics.standardOutput.split(separator: "\n").first {
            $0.hasPrefix("lyceum_journal_write_failures_total{") && $0.contains(#"reason="full""#) && $0.contains(#"service="books""#)
        }
        #expect(failures.map { Int($0.split(separator: " ").last ?? "") ?? 0 } ?? 0 >= refusals, "metric: \(failures.map(String.init) ?? "absent")")
        let logLines = serve.process.standardError.split(separator: "\n").filter { $0.contains("the file system is full") }
        print("\(refusals) creates refused with storage_full; \(logLines.count) log lines about it (rate-limited per message); \(failures.map(String.init) ?? "")")
        #expect(!logLines.isEmpty && logLines.allSatisfy { $0.contains("level=error") && $0.contains("errno=28") })

        // Space returns: the same request is applied, by itself, with no restart.
        try namespace.free()
        var resumed: [String: Any] = [:]
        #expect(try eventually {
            resumed = try serve.call("books", createBook(learner: "ada", title: "Refused 0", requestID: "refused-0"))
            return resumed.isOK
        }, "writes did not resume once space returned: \(resumed)")
        acknowledged.insert(try #require(resumed.bookID))
        #expect(try serve.bookIDs(of: "ada") == acknowledged)

        // Nothing acknowledged is lost across a restart on the same tmpfs.
        #expect(serve.process.signal(SIGTERM) == 0)
        try serve.start(launcher: namespace.launcher)
        let found = try serve.bookIDs(of: "ada")
        print("acknowledged \(acknowledged.count), found after the restart \(found.count)")
        #expect(found == acknowledged)
    }
}

/// A tmpfs of `megabytes` at `path`, mounted in a mount namespace of its own that a holder
/// process (`unshare --mount`, then `sleep`) keeps alive; ``launcher`` runs a program in it.
final class PrivateTmpfs: @unchecked Sendable {
    private let holder: ChildProcess
    private let path: String
    private var filler: String { "/proc/\(holder.processIdentifier)/root\(path)/filler" }

    init(at path: String, megabytes: Int) throws {
        self.path = path
        holder = try ChildProcess("/usr/bin/unshare", [
            "--mount", "--propagation", "private", "/bin/sh", "-c",
            #"mount -t tmpfs -o size=\#(megabytes)m lyceum-full-disk "$0" && echo mounted && exec sleep 100000"#, path,
        ])
        try #require(holder.waitForLine("mounted") != nil, "the tmpfs was not mounted: \(holder.standardError)")
    }

    /// Runs the program after it in the namespace (nsenter execs it: its pid is the program's).
    var launcher: [String] { ["/usr/bin/nsenter", "--mount=/proc/\(holder.processIdentifier)/ns/mnt", "--"] }

    /// Writes a file until the tmpfs has no space left; returns its size.
    func fill() throws -> Int {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0x2A, count: 4096)
        var total = 0
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { break }
            total += written
        }
        return total
    }

    /// Removes what ``fill()`` wrote.
    func free() throws {
        guard unlink(filler) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
    }

    /// Ends the holder: the namespace and its tmpfs go with it.
    func stop() { holder.stop() }
}
