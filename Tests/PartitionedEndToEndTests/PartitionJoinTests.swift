import Foundation
import LyceumTestSupport
import Testing
import ZeroMQ

/// A worker host joining a running partitioned cluster empty (`join`), and getting its share by
/// `lyceum partitions rebalance` while the cluster serves; real processes on loopback.
@Suite(.serialized) struct PartitionJoinTests {
    @Test func aWorkerStartedEmptyWithJoinRegistersItsNodeServiceAndStatusShowsItHoldingNothing() throws {
        let cluster = try Deployment.moving()
        try cluster.join("w3")

        #expect(try cluster.held("w3") == [] && cluster.held("w3", "progress") == [])
        #expect(cluster.workers["w3"]?.standardError.contains("waiting for partitions") == true)
        let status = try LyceumProcess.run(["status", "--broker", cluster.endpoint], timeout: .seconds(120))
        #expect(status.status == 0, "\(status.stderr)")
        let partitions = try #require(try parse(Array(status.stdout.utf8))["partitions"] as? [String: Any])
        let nodes = try #require(partitions["nodes"] as? [[String: Any]])
        #expect(nodes.compactMap { $0["node"] as? String } == ["w1", "w2", "w3"])
        #expect(nodes.compactMap { $0["held"] as? Int } == [8, 8, 0])
        #expect(partitions["unowned"] as? Int == 0 && partitions["contested"] as? Int == 0)
    }

    @Test func rebalanceGivesTheJoinedNodeItsShareAndEveryAcknowledgedWriteIsReadableFromTheNewOwners() throws {
        let cluster = try Deployment.moving()
        try cluster.join("w3")
        // w1 gives up its highest partition, then w2 its own (RebalancePlan): load on both, and on one that stays.
        let loads = [3, 7, 0].map { WriteLoad(cluster, partition: $0) }
        #expect(eventually { loads.allSatisfy { $0.acknowledged.withLock { $0.count } >= 10 } })

        let rebalanced = try LyceumProcess.run(["partitions", "rebalance", "--broker", cluster.endpoint], timeout: .seconds(300))

        #expect(rebalanced.status == 0, "\(rebalanced.stdout)\n\(rebalanced.stderr)")
        let counts = loads.map { $0.acknowledged.withLock { $0.count } }
        #expect(eventually { zip(loads, counts).allSatisfy { $0.acknowledged.withLock { $0.count } >= $1 + 10 } }, "writes go on")
        for load in loads { try load.stop() }
        for load in loads {
            #expect(load.failures.withLock { $0 } == [], "p\(load.partition): delayed, not lost")
            #expect(try load.unreadable(in: cluster) == [], "p\(load.partition)")
        }
        for service in ["books", "progress"] {
            #expect(try cluster.held("w1", service) == [0, 1, 2], "\(service)")
            #expect(try cluster.held("w2", service) == [4, 5, 6], "\(service)")
            #expect(try cluster.held("w3", service) == [3, 7], "\(service)")
        }
        let again = try LyceumProcess.run(["partitions", "rebalance", "--broker", cluster.endpoint], timeout: .seconds(120))
        #expect(again.status == 0 && again.stdout.contains("books: balanced over 3 nodes"), "\(again.stdout)\n\(again.stderr)")

        // Adopted (w3 serves them): the sources' renamed-away copies can go, and nothing else does.
        for node in ["w1", "w2"] {
            let pruned = try LyceumProcess.run(["partitions", "prune", "--data", cluster.root(node)], timeout: .seconds(120))
            #expect(pruned.status == 0 && pruned.stdout.contains("removed 2 moved-away copies"), "\(pruned.stdout)\n\(pruned.stderr)")
            #expect(!cluster.entries(node).contains { $0.contains(".moved-to-") } && !cluster.entries(node, "progress").contains { $0.contains(".moved-to-") })
        }
        #expect(try cluster.held("w1") == [0, 1, 2] && cluster.held("w2") == [4, 5, 6])
        #expect(try loads[2].unreadable(in: cluster) == [], "p0 still served from w1 after the prune")
    }

    @Test func aProgressPartitionMovedToAJoinedNodeJoinsItsSnapshots() throws {
        let snapshots = try freeLoopbackEndpoint()
        let cluster = try Deployment.moving()
        // Holding no progress partition yet, it still needs the publisher those moving in use.
        try cluster.join("w3", extra: ["--snapshot-endpoint", snapshots])
        let learner = try cluster.beginCourse(partition: 2)

        let moved = try cluster.move(["2", "--to", "w3", "--service", "progress"])

        #expect(moved.status == 0, "\(moved.stdout)\n\(moved.stderr)")
        let context = try Context()
        #expect(try eventually { try PartitionMoveEndToEndTests.snapshotLearners(snapshots, context: context) == [learner] })
    }

    @Test func anEmptyWorkerWithoutJoinRefusesToStartNamingTheSetting() throws {
        let cluster = try Deployment.moving()
        let worker = try LyceumProcess(cluster.workerArguments("w3"))
        #expect(worker.waitForExit() == 2)
        #expect(worker.standardError.contains("holds no partition of books") && worker.standardError.contains("--join"), "\(worker.standardError)")
        #expect(!FileManager.default.fileExists(atPath: cluster.root("w3")), "nothing was created")
    }

    @Test func joinDoesNotServeAnUnpartitionedJournal() throws {
        let cluster = try Deployment.moving()
        try FileManager.default.createDirectory(atPath: cluster.root("w3") + "/books", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: cluster.root("w3") + "/books/journal.jsonl", contents: Data()))
        let worker = try LyceumProcess(cluster.workerArguments("w3", ["--join"]))
        #expect(worker.waitForExit() == 2)
        #expect(worker.standardError.contains("books/journal.jsonl: is the journal of an unpartitioned deployment"), "\(worker.standardError)")
    }

    @Test func aMoveToANodeWhoseSessionsWouldNotFitIsRefusedAtBeginAndTheSourceKeepsServing() throws {
        let cluster = try Deployment.moving()
        // 128 descriptors: 16 sessions of the node service fit, 16 more for a partition do not
        // (WorkerSessionBudget: 2 per session, 8 per instance, 64 kept).
        try cluster.join("w3", extra: ["--sessions", "16"], launcher: ["/usr/bin/prlimit", "--nofile=128", "--"])

        let moved = try cluster.move(["3", "--to", "w3", "--service", "books"])

        #expect(moved.status == 1, "\(moved.stdout)\n\(moved.stderr)")
        #expect(moved.stderr.contains("stopped at step begin") && moved.stderr.contains("node w3 cannot serve books.p3 too"), "\(moved.stderr)")
        #expect(moved.stderr.contains("use --sessions"), "\(moved.stderr)")
        #expect(cluster.entries("w3") == [], "nothing was received")
        #expect(cluster.entries("w1").contains("p3") && !cluster.entries("w1").contains { $0.hasPrefix("p3.") })
        #expect(try cluster.held("w1") == [0, 1, 2, 3])
        #expect(cluster.workers["w1"]?.standardError.contains("partition released") == false, "the source never stopped serving it")
        let learner = Deployment.learner(in: 3)
        let client = try cluster.client(timeout: .seconds(10))
        defer { client.close() }
        let created = try parse(try client.call("books.p3", body: [Array(#"{"op":"create","learner":"\#(learner)","title":"T","author":"A","genre":"Fantasy","rating":3}"#.utf8)])[0])
        #expect(created.isOK, "\(created)")
    }
}
