import Foundation
import LyceumTestSupport
import Testing

/// `lyceum serve` (durability `always`) whose fdatasync starts failing with EIO, injected by
/// libfiu (`fiu-run -x`, then `fiu-ctrl` enables `posix/io/sync/fdatasync` in the running
/// process): the create in flight gets an error reply, not a timeout; serve exits by itself with
/// status 74 and one critical log line, no crash trap and no backtrace; restarted without the
/// fault, it holds every acknowledged book and not the one whose sync failed.
@Suite(.serialized) struct FailingSyncTests {
    static let fiuAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/fiu-run")

    @Test(.enabled(if: fiuAvailable, "needs fiu-utils: scripts/ensure-deps.sh test"))
    func anFdatasyncFailingWithEIOStopsServeAndLosesNothingAcknowledged() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let serve = try FaultyServe(dataDirectory: data.path, arguments: ["--durability", "always"], launcher: ["/usr/bin/fiu-run", "-x"])
        var acknowledged = Set<String>()
        for number in 0..<20 {
            let reply = try serve.call("books", createBook(learner: "ada", title: "Before \(number)", requestID: "before-\(number)"))
            try #require(reply.isOK, "create \(number): \(reply)")
            acknowledged.insert(try #require(reply.bookID))
        }

        try failSyncs(of: serve.process.processIdentifier)
        let failed = try serve.call("books", createBook(learner: "ada", title: "Failed", requestID: "failed-1"), timeout: .seconds(30))
        print("the create whose sync failed was answered: \(failed)")
        #expect(!failed.isOK)
        #expect(failed.errorCode == "unavailable")
        let message = failed.error["message"] as? String ?? ""
        #expect(message.contains("not acknowledged") && !message.contains(data.path), "the reply must say what to do and name no server path: \(message)")

        let status = serve.process.waitForExit()
        let log = serve.process.standardError
        #expect(status == 74, "serve should exit with EX_IOERR (74) after a failed sync, not \(String(describing: status)):\n\(log)")
        let critical = log.split(separator: "\n").filter { $0.contains("level=critical") }
        #expect(critical.count == 1, "one critical line, got:\n\(critical.joined(separator: "\n"))")
        #expect(critical.first?.contains(#"msg="a sync failed"#) == true && critical.first?.contains("operation=fdatasync") == true && critical.first?.contains("errno=5") == true)
        #expect(!log.contains("Fatal error") && !log.contains("Backtrace") && !log.contains("Current stack trace"), "no crash trap:\n\(log)")

        try serve.start()
        let found = try serve.bookIDs(of: "ada")
        print("acknowledged \(acknowledged.count), found after the restart \(found.count)")
        #expect(acknowledged.subtracting(found).isEmpty, "\(acknowledged.subtracting(found).count) acknowledged books lost")
        #expect(found == acknowledged, "the record whose sync failed was replayed: \(found.subtracting(acknowledged))")
        // The retry under the same request_id is applied now, once.
        let retried = try serve.call("books", createBook(learner: "ada", title: "Failed", requestID: "failed-1"))
        #expect(retried.isOK)
        #expect(try serve.bookIDs(of: "ada").count == acknowledged.count + 1)
    }
}

/// A replica set (three `lyceum worker`s under `fiu-run -x`, a real etcd) one of whose
/// fdatasyncs starts failing with EIO while a writer goes on: a failing follower is never
/// counted, a failing leader is replaced; the failing process exits 74 with one critical line,
/// and nothing acknowledged is lost.
@Suite(.serialized) struct ReplicaFailingSyncTests {
    @Test(.enabled(if: FailingSyncTests.fiuAvailable, "needs fiu-utils: scripts/ensure-deps.sh test"))
    func aFollowerWhoseFdatasyncFailsExitsAndTheOthersGoOn() throws {
        let cluster = try ReplicaTrio(launcher: ["/usr/bin/fiu-run", "-x"])
        let writer = RetryingWriter(endpoint: cluster.endpoint)
        try #require(eventually { writer.count >= 20 }, "no writes acknowledged\n\(cluster.logs)")
        let leader = try cluster.leader()
        let follower = try #require(ReplicaTrio.nodes.first { $0 != leader })
        let process = try #require(cluster.workers[follower])
        try failSyncs(of: process.processIdentifier)
        let failedAt = writer.count
        let status = process.waitForExit()
        #expect(status == 74, "the follower should exit with 74, not \(String(describing: status)):\n\(process.standardError)")
        let critical = process.standardError.split(separator: "\n").filter { $0.contains("level=critical") }
        #expect(critical.count == 1 && critical.first?.contains("errno=5") == true, "\(critical)")
        #expect(!process.standardError.contains("Fatal error"), "no crash trap")
        try #require(eventually { writer.count >= failedAt + 40 }, "writes stopped with one follower failed\n\(cluster.logs)")
        #expect(try cluster.leader() == leader, "the leadership changed")
        print("a follower's fdatasync failed: it exited \(String(describing: status)); \(writer.count - failedAt) writes acknowledged by the other two since")

        try cluster.start(follower)
        let restarted = writer.count
        try #require(eventually { writer.count >= restarted + 20 }, "no writes after the follower returned\n\(cluster.logs)")
        try writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
    }

    /// The leader's fdatasync fails: it resigns and exits 74 with one critical line, a follower
    /// takes over, the writer's retries are answered there, and nothing acknowledged is lost.
    @Test(.enabled(if: FailingSyncTests.fiuAvailable, "needs fiu-utils: scripts/ensure-deps.sh test"))
    func aLeaderWhoseFdatasyncFailsExitsAndAFollowerTakesOver() throws {
        let cluster = try ReplicaTrio(launcher: ["/usr/bin/fiu-run", "-x"])
        let writer = RetryingWriter(endpoint: cluster.endpoint)
        try #require(eventually { writer.count >= 20 }, "no writes acknowledged\n\(cluster.logs)")
        let leader = try cluster.leader()
        let process = try #require(cluster.workers[leader])
        try failSyncs(of: process.processIdentifier)
        let status = process.waitForExit()
        let failedAt = writer.count
        #expect(status == 74, "the leader should exit with 74, not \(String(describing: status)):\n\(process.standardError)")
        let critical = process.standardError.split(separator: "\n").filter { $0.contains("level=critical") }
        #expect(critical.count == 1 && critical.first?.contains("errno=5") == true, "\(critical)")
        try #require(eventually { writer.count >= failedAt + 20 }, "no writes after the fail-over\n\(cluster.logs)")
        let next = try cluster.leader(excluding: [leader])
        print("the leader's fdatasync failed: it exited \(String(describing: status)); \(next) leads, \(writer.count - failedAt) writes acknowledged since")
        try cluster.start(leader)
        try writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
    }
}

/// Makes every later fdatasync of process `pid` (started under `fiu-run -x`) fail with EIO.
private func failSyncs(of pid: pid_t) throws {
    let control = try ChildProcess.run("/usr/bin/fiu-ctrl", ["-c", "enable name=posix/io/sync/fdatasync,failinfo=\(EIO)", String(pid)])
    try #require(control.status == 0, "fiu-ctrl: \(control)")
}
