import EventSubscription
import EventPublishing
import Foundation
import PartitionOperations
import LyceumTestSupport
import Majordomo
import Partitions
import Testing
import ZeroMQ

@Suite(.serialized) struct PartitionMoveEndToEndTests {
    @Test func aPartitionMovesUnderWriteLoadAndEveryAcknowledgedWriteIsReadableFromTheNewOwner() throws {
        let cluster = try Deployment.moving()
        let moving = WriteLoad(cluster, partition: 2)
        let other = WriteLoad(cluster, partition: 1)
        #expect(eventually { moving.acknowledged.withLock { $0.count } >= 20 })

        let moved = try cluster.move(["2", "--to", "w2", "--service", "books"])

        #expect(moved.status == 0, "\(moved.stdout)\n\(moved.stderr)")
        let before = moving.acknowledged.withLock { $0.count }
        #expect(eventually { moving.acknowledged.withLock { $0.count } >= before + 20 }, "writes go on at the new owner")
        try moving.stop()
        try other.stop()
        #expect(moving.failures.withLock { $0 } == [], "requests of the moving partition were delayed, not lost")
        #expect(other.failures.withLock { $0 } == [], "the other partitions were unaffected")

        #expect(try moving.unreadable(in: cluster) == [])
        #expect(cluster.entries("w2").contains("p2"))
        #expect(!cluster.entries("w1").contains("p2"))
        #expect(cluster.entries("w1").contains { $0.hasPrefix("p2.moved-to-w2-") })
        #expect(try cluster.held("w1") == [0, 1, 3])
    }

    @Test func aMovedProgressPartitionLeavesTheSourcesSnapshotsAndMetricsAndJoinsTheTargets() throws {
        var options: [String: [String]] = [:]
        var metricsPorts: [String: Int] = [:]
        var snapshots: [String: String] = [:]
        for node in ["w1", "w2"] {
            metricsPorts[node] = try freeLoopbackPort()
            snapshots[node] = try freeLoopbackEndpoint()
            options[node] = ["--metrics-port", String(metricsPorts[node]!), "--snapshot-endpoint", snapshots[node]!]
        }
        let cluster = try Deployment.moving(options: options)
        let learner = try cluster.beginCourse(partition: 2)
        let context = try Context()
        #expect(try eventually { try Self.snapshotLearners(snapshots["w1"]!, context: context) == [learner] })
        #expect(try Self.snapshotLearners(snapshots["w2"]!, context: context) == [])

        let moved = try cluster.move(["2", "--to", "w2", "--service", "progress"])

        #expect(moved.status == 0, "\(moved.stdout)\n\(moved.stderr)")
        // The snapshots follow the partitions held: the learner left w1's and joined w2's.
        #expect(try eventually { try Self.snapshotLearners(snapshots["w1"]!, context: context) == [] })
        #expect(try eventually { try Self.snapshotLearners(snapshots["w2"]!, context: context) == [learner] })
        // So do the journal metrics: one process at a time reports progress.p2's journal.
        let progressPartitions = { (node: String) in
            Set(try Metrics.scrape(port: metricsPorts[node]!).samples
                .filter { $0.name == "lyceum_journal_last_sequence" && $0.labels["service"] == "progress" }.compactMap { $0.labels["partition"] })
        }
        #expect(try progressPartitions("w1") == ["0", "1", "3"])
        #expect(try progressPartitions("w2") == ["2", "4", "5", "6", "7"])
    }

    /// The learners in the progress snapshot a worker answers at `endpoint`.
    static func snapshotLearners(_ endpoint: String, context: Context) throws -> Set<String> {
        let socket = try context.socket(.dealer)
        defer { socket.close() }
        try socket.set(.linger, to: 0)
        try socket.set(.receiveTimeout, to: 5000)
        try socket.connect(endpoint)
        _ = try socket.send(multipart: [Array(SnapshotProtocol.snapshotCommand.utf8), Array(EventTopic.progress.utf8)])
        let reply = try #require(try socket.receiveMultipart())
        try #require(reply.count == 2 && reply[0] == Array(SnapshotProtocol.snapshotCommand.utf8), "\(reply)")
        let entries = try #require(try parse(reply[1])["entries"] as? [[String: Any]])
        return Set(entries.compactMap { $0["learner"] as? String })
    }

    @Test func aMoveResentAfterTheSourceRestartedGetsTheOutcomeItHad() throws {
        let cluster = try Deployment.moving()
        let request = [Array(#"{"op":"move","service":"books","partition":2,"to":"w2","move_id":"move-restart-1"}"#.utf8)]
        let client = try cluster.client(timeout: .seconds(60))
        defer { client.close() }
        let first = try client.call(NodeService.namePrefix + "w1", body: request)
        #expect(try parse(first[0]).isOK, "\(first)")

        cluster.workers["w1"]?.stop()  // kill -9: the outcome was on disk before the reply
        try cluster.start("w1", registering: "books.p0")
        let again = try client.call(NodeService.namePrefix + "w1", body: request)

        #expect(again == first, "the same move's outcome, not a resumed one")
        let other = try parse(try client.call(NodeService.namePrefix + "w1", body: [Array(#"{"op":"move","service":"books","partition":3,"to":"w2","move_id":"move-restart-1"}"#.utf8)])[0])
        #expect(other.errorCode == "bad_request", "the id names another move: \(other)")
        #expect(try cluster.held("w1") == [0, 1, 3] && cluster.held("w2") == [2, 4, 5, 6, 7])
    }

    @Test func aMoveToAnUnknownNodeFailsCleanlyAndThePartitionKeepsBeingServed() throws {
        let cluster = try Deployment.moving()
        let moved = try cluster.move(["2", "--to", "w9", "--service", "books"])
        #expect(moved.status == 1, "\(moved.stdout)\n\(moved.stderr)")
        #expect(cluster.entries("w1").contains("p2"))
        let client = try cluster.client(timeout: .seconds(10))
        defer { client.close() }
        #expect(try client.isRegistered("books.p2"))
    }

    @Test func theSourceKilledMidTransferServesThePartitionAloneAfterItsRestart() throws {
        let cluster = try Deployment.moving()
        // A large file in the partition's directory makes the copy take long enough to cut.
        let padding = cluster.root("w1") + "/books/p2/padding"
        FileManager.default.createFile(atPath: padding, contents: Data(repeating: 7, count: 96 << 20))
        let mover = ThreadResult("move") { try cluster.move(["2", "--to", "w2", "--service", "books", "--timeout", "5000"]) }
        #expect(eventually { cluster.entries("w2").contains("p2.incoming") })
        _ = cluster.workers["w1"]?.signal(SIGKILL)
        let outcome = try mover.value()
        #expect(outcome.status == 3, "no answer from the killed source: \(outcome.stdout)\n\(outcome.stderr)")
        #expect(cluster.entries("w1").contains("p2"))
        #expect(!cluster.entries("w2").contains("p2"))

        try cluster.start("w1", registering: "books.p2")
        #expect(try cluster.held("w2") == [4, 5, 6, 7], "w2 never adopted it")
    }
}
