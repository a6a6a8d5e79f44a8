import Foundation
import LyceumTestSupport
import Testing

/// Issue 29: `lyceum backup` of a running `serve` under a write load, `backup verify`, and
/// `restore` into a new data directory that a new `serve` then serves; and the refusals, each
/// naming the file and the reason, that leave nothing written.
@Suite(.timeLimit(.minutes(5)), .serialized)
struct BackupEndToEndTests {
    private static func create(_ client: Int, _ sequence: Int) -> String {
        #"{"op":"create","request_id":"w\#(client)-\#(sequence)","learner":"learner-\#(client)-\#(sequence)","title":"Book \#(client)-\#(sequence)","author":"A","genre":"Kids","rating":3}"#
    }

    @Test func aBackupUnderLoadRestoresEveryAcknowledgedWriteAndAnswersRetriesAsTheOriginal() throws {
        let data = try TemporaryDirectory()
        let backups = try TemporaryDirectory()
        defer { data.remove(); backups.remove() }
        var server: Deployment? = try Deployment.serve(data: data.path + "/original")
        let endpoint = server!.endpoint
        let load = Load(endpoint: endpoint, clients: 2) { client, sequence in ("books", Self.create(client, sequence)) }
        load.run(for: .milliseconds(500))
        let backupStarted = ContinuousClock.now
        let target = backups.path + "/b1"
        let backup = try LyceumProcess.run(["backup", "--to", target, "--broker", endpoint], timeout: .seconds(120))
        #expect(backup.status == 0, "lyceum backup failed:\n\(backup.stderr)")
        #expect(backup.stdout.contains("backup complete"))
        load.run(for: .milliseconds(300))
        let outcomes = try load.stop()

        // The copy is private, and the server kept nothing of it once it ended.
        #expect(try mode(of: target) == 0o700)
        #expect(try mode(of: target + "/books/journal.jsonl") == 0o600)
        #expect(try mode(of: target + "/manifest.json") == 0o600)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: data.path + "/original/.backups")) ?? []
        #expect(left.isEmpty, "the server's snapshot files outlived the backup: \(left)")
        let verified = try LyceumProcess.run(["backup", "verify", target])
        #expect(verified.status == 0, "verify refused a whole backup:\n\(verified.stderr)")

        server = nil
        let restoredData = data.path + "/restored"
        let restored = try LyceumProcess.run(["restore", "--from", target, "--data", restoredData])
        #expect(restored.status == 0, "restore failed:\n\(restored.stderr)")
        let again = try Deployment.serve(data: restoredData)

        let before = outcomes.filter { $0.finished < backupStarted && $0.reply != nil }
        try #require(!before.isEmpty, "no write was acknowledged before the backup started")
        for outcome in before {
            let reply = try #require(try outcome.parsed())
            guard reply.isOK else { continue }
            // A retry of the same request_id gets the original reply, byte for byte: the ledger was restored.
            let retried = try again.call("books", frames: [Array(outcome.request.utf8)])
            #expect(retried.first == outcome.reply, "retry of \(outcome.request) answered differently after the restore")
            // One learner per write, so the book is there exactly once.
            let learner = try #require(outcome.request.firstMatch(of: /"learner":"([^"]+)"/)?.1)
            let listed = try again.call("books", #"{"op":"list","learner":"\#(learner)"}"#)
            #expect((listed.result["books"] as? [Any])?.count == 1, "\(learner): \(listed)")
        }
        let fresh = try again.call("books", Self.create(7, 0))
        #expect(fresh.isOK, "the restored server refused a new write: \(fresh)")
    }

    @Test func damagedTruncatedAndMismatchedBackupsAreRefusedWithTheFileAndReason() throws {
        let data = try TemporaryDirectory()
        let backups = try TemporaryDirectory()
        defer { data.remove(); backups.remove() }
        let server = try Deployment.serve(data: data.path + "/original")
        for sequence in 0..<20 { #expect(try server.call("books", Self.create(1, sequence)).isOK) }
        let good = backups.path + "/good"
        let taken = try LyceumProcess.run(["backup", "--to", good, "--broker", server.endpoint])
        try #require(taken.status == 0, "lyceum backup failed:\n\(taken.stderr)")

        // A wrong partition count: refused with both numbers, nothing written.
        let target = data.path + "/restored"
        let partitioned = try LyceumProcess.run(["restore", "--from", good, "--data", target, "--partitions", "4", "--own", "0-3"])
        #expect(partitioned.status == 1)
        #expect(partitioned.stderr.contains("holds 0 partitions") && partitioned.stderr.contains("for 4"), "\(partitioned.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))

        // A non-empty target.
        let occupied = data.path + "/occupied"
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: occupied + "/keep", contents: Data("x".utf8))
        let intoOccupied = try LyceumProcess.run(["restore", "--from", good, "--data", occupied])
        #expect(intoOccupied.status == 1 && intoOccupied.stderr.contains("is not empty"), "\(intoOccupied.stderr)")

        // One damaged byte in a journal file; a truncated manifest; a value format newer than this build reads.
        let damages: [(name: String, file: String, reason: String, damage: @Sendable (Data) -> Data)] = [
            ("damaged", "books/journal.jsonl", "CRC-32C", { var bytes = $0; bytes[bytes.count / 2] ^= 0x20; return bytes }),
            ("truncated", "manifest.json", "not JSON", { $0.prefix($0.count / 2) }),
            ("newer", "manifest.json", "newer Lyceum", {
                Data(String(decoding: $0, as: UTF8.self).replacingOccurrences(of: #""books":1"#, with: #""books":2"#).utf8)
            }),
        ]
        for damage in damages {
            let copy = backups.path + "/" + damage.name
            try FileManager.default.copyItem(atPath: good, toPath: copy)
            let file = copy + "/" + damage.file
            try damage.damage(try Data(contentsOf: URL(fileURLWithPath: file))).write(to: URL(fileURLWithPath: file))
            for arguments in [["backup", "verify", copy], ["restore", "--from", copy, "--data", target]] {
                let refused = try LyceumProcess.run(arguments)
                #expect(refused.status == 1)
                #expect(refused.stderr.contains(file) && refused.stderr.contains(damage.reason), "\(damage.name), \(arguments[0]): \(refused.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: target))
        }
    }

    @Test func aBackupClientKilledHalfWayLeavesTheServiceServingAndNoBackupThatVerifies() throws {
        let data = try TemporaryDirectory()
        let backups = try TemporaryDirectory()
        defer { data.remove(); backups.remove() }
        let server = try Deployment.serve(data: data.path + "/original")
        let load = Load(endpoint: server.endpoint, clients: 2) { client, sequence in ("books", Self.create(client, sequence)) }
        load.run(for: .seconds(1))
        _ = try load.stop()
        let half = backups.path + "/half"
        // Small chunks, so that the copy is still running when its first progress line shows.
        let client = try LyceumProcess(["backup", "--to", half, "--broker", server.endpoint, "--chunk-bytes", "1024"])
        let copying = eventually { client.standardError.contains("backup: ") }
        try #require(copying, "the backup client showed no progress:\n\(client.standardError)")
        client.send(SIGKILL)
        _ = client.waitForExit()
        #expect(!client.standardOutput.contains("backup complete"), "the copy finished before it was killed")

        let verified = try LyceumProcess.run(["backup", "verify", half])
        #expect(verified.status == 1 && verified.stderr.contains("manifest.json"), "\(verified.stderr)")
        #expect(try server.call("books", Self.create(9, 0)).isOK)
        let whole = try LyceumProcess.run(["backup", "--to", backups.path + "/whole", "--broker", server.endpoint])
        #expect(whole.status == 0, "a backup after the killed one failed:\n\(whole.stderr)")
    }

    @Test func overCurveOnlyAnAdminKeyTakesABackup() throws {
        let keys = try CurveRolesEndToEndTests.keys()
        let data = try TemporaryDirectory()
        let backups = try TemporaryDirectory()
        defer { data.remove(); backups.remove() }
        let serve = try CurveServer(keys: keys, data: data.path)
        let refused = try LyceumProcess.run(["backup", "--to", backups.path + "/app", "--broker", serve.endpoint] + keys.client("app"))
        #expect(refused.status == 1 && refused.stderr.contains("forbidden"), "\(refused.stderr)")
        let taken = try LyceumProcess.run(["backup", "--to", backups.path + "/admin", "--broker", serve.endpoint] + keys.client("admin"))
        #expect(taken.status == 0, "\(taken.stderr)")
        #expect(try LyceumProcess.run(["backup", "verify", backups.path + "/admin"]).status == 0)
    }

    /// A backup begun and never read (its client gone) is abandoned after `backup-idle-limit`: its
    /// snapshot files are removed and its slot is freed. The limit is short here so the test
    /// need not wait a minute; what is checked is the outcome, never how soon it came.
    @Test func aBackupBegunAndNeverReadIsAbandonedItsSlotFreedAndItsFilesRemoved() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path, arguments: ["--backup-idle-limit", "1000"])
        for sequence in 0..<5 { #expect(try server.call("books", Self.create(1, sequence)).isOK) }
        let begun = try server.call("lyceum.backup", #"{"op":"begin"}"#)
        let id = try #require(begun.result["backup"] as? String, "\(begun)")
        let files = data.path + "/.backups/" + id
        #expect(FileManager.default.fileExists(atPath: files + "/books/journal.jsonl"))

        // Nobody reads it: once abandoned, its files are gone and it is unknown.
        let removed = eventually { !FileManager.default.fileExists(atPath: files) }
        #expect(removed, "the abandoned backup's files are still there:\n\(server.process.standardError)")
        #expect(eventually { server.process.standardError.contains("backup abandoned by its client") })
        let read = try server.call("lyceum.backup", #"{"op":"read","backup":"\#(id)","file":"books/journal.jsonl","offset":0}"#)
        #expect(read.errorCode == "not_found", "\(read)")

        // Its slot is free: the two a process allows are both taken again, and each of those
        // is read to the end and ended as a client would.
        var next: [[String: Any]] = []
        for _ in 0..<2 { next.append(try server.call("lyceum.backup", #"{"op":"begin"}"#)) }
        #expect(next.allSatisfy { $0.isOK }, "\(next)")
        for reply in next {
            guard let other = reply.result["backup"] as? String else { continue }
            _ = try server.call("lyceum.backup", #"{"op":"end","backup":"\#(other)","complete":false}"#)
        }
        #expect(eventually {
            ((try? FileManager.default.contentsOfDirectory(atPath: data.path + "/.backups")) ?? []).isEmpty
        })
    }

    @Test func snapshotFilesACrashLeftAreRemovedWhenServeStarts() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let stale = data.path + "/.backups/0123abcd/books"
        try FileManager.default.createDirectory(atPath: stale, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: stale + "/journal.jsonl", contents: Data("left by a crash".utf8))
        let server = try Deployment.serve(data: data.path)
        #expect(!FileManager.default.fileExists(atPath: data.path + "/.backups/0123abcd"))
        #expect(try server.call("books", Self.create(1, 0)).isOK)
    }

    private func mode(of path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }
}
