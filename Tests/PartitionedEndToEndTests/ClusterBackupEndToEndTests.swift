import Foundation
import LyceumTestSupport
import Testing

/// Issue 29 through a partitioned cluster: `lyceum backup` asks each worker's node service
/// through the broker while writes go on, and `restore --partitions 8 --own …` gives each worker
/// host back the partitions it holds.
@Suite(.serialized)
struct ClusterBackupEndToEndTests {
    @Test func aClusterBackupUnderLoadRestoresEachHostsPartitionsAndRetriesAnswerAsBefore() throws {
        let cluster = try Deployment.moving()
        let backups = try TemporaryDirectory()
        defer { backups.remove() }
        // One idempotent write in every partition, answered before the backup.
        var originals: [(request: String, reply: [UInt8])] = []
        let client = try cluster.client(timeout: .seconds(10))
        for partition in 0..<8 {
            let learner = Deployment.learner(in: partition)
            let request = #"{"op":"create","request_id":"r\#(partition)","learner":"\#(learner)","title":"T\#(partition)","author":"A","genre":"Kids","rating":3}"#
            originals.append((request, try client.call("books", body: [Array(request.utf8)])[0]))
        }
        client.close()
        let loads = [WriteLoad(cluster, partition: 2), WriteLoad(cluster, partition: 5)]
        #expect(eventually { loads.allSatisfy { $0.acknowledged.withLock { $0.count } >= 10 } })
        let before = loads.map { $0.acknowledged.withLock { $0 } }

        let target = backups.path + "/cluster"
        let taken = try LyceumProcess.run(["backup", "--to", target, "--broker", cluster.endpoint], timeout: .seconds(120))
        try #require(taken.status == 0, "lyceum backup failed:\n\(taken.stderr)")
        #expect(taken.stdout.contains("16 journals"), "\(taken.stdout)")
        for load in loads { try load.stop() }
        #expect(try LyceumProcess.run(["backup", "verify", target]).status == 0)

        for node in ["w1", "w2"] {
            cluster.workers[node]?.signal(SIGTERM)
            try FileManager.default.removeItem(atPath: cluster.root(node))
        }
        let mismatch = try LyceumProcess.run(["restore", "--from", target, "--data", cluster.root("w1"), "--partitions", "4", "--own", "0-3"])
        #expect(mismatch.status == 1 && mismatch.stderr.contains("holds 8 partitions") && mismatch.stderr.contains("for 4"), "\(mismatch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cluster.root("w1")))
        for (node, owned) in [("w1", "0-3"), ("w2", "4-7")] {
            let restored = try LyceumProcess.run(["restore", "--from", target, "--data", cluster.root(node), "--partitions", "8", "--own", owned])
            try #require(restored.status == 0, "restore of \(node) failed:\n\(restored.stderr)")
        }
        try cluster.start("w1", registering: "books.p0")
        try cluster.start("w2", registering: "books.p4")
        #expect(try cluster.held("w1") == [0, 1, 2, 3])

        let again = try cluster.client(timeout: .seconds(10))
        defer { again.close() }
        for original in originals {
            #expect(try again.call("books", body: [Array(original.request.utf8)])[0] == original.reply, "retry of \(original.request)")
        }
        for (load, acknowledged) in zip(loads, before) {
            let learner = Deployment.learner(in: load.partition)
            for id in acknowledged {
                let reply = try parse(try again.call("books", body: [Array(#"{"op":"get","learner":"\#(learner)","id":"\#(id)"}"#.utf8)])[0])
                #expect(reply.isOK, "book \(id) acknowledged before the backup is missing: \(reply)")
            }
        }
    }
}
