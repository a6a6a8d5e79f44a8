import Catalog
import Events
import Foundation
import LyceumTestSupport
import Majordomo
import Partitions
import Synchronization
import Testing
import ZeroMQ

/// A broker and two partitioned workers, real processes on loopback: w1 holds partitions 0-3,
/// w2 holds 4-7 (of 8). `lyceum partitions move` moves one of w1's to w2 while it serves.
private final class TwoWorkerCluster: @unchecked Sendable {
    let data: TemporaryDirectory
    let endpoint: String
    let broker: LyceumProcess
    var workers: [String: LyceumProcess] = [:]
    /// Each node's options beyond the common ones.
    let options: [String: [String]]

    init(options: [String: [String]] = [:]) throws {
        self.options = options
        data = try TemporaryDirectory()
        endpoint = try freeLoopbackEndpoint()
        for (node, owned) in [("w1", "0-3"), ("w2", "4-7")] {
            let initialized = try LyceumProcess.run(["partitions", "init", "--data", data.path + "/" + node, "--partitions", "8", "--own", owned])
            try #require(initialized.status == 0, "\(initialized.stderr)")
        }
        broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--forwarder-endpoint", try freeLoopbackEndpoint(),
                                    "--events-endpoint", try freeLoopbackEndpoint(), "--partitions", "8"])
        try start("w1", registering: "books.p0")
        try start("w2", registering: "books.p4")
    }

    deinit {
        workers.values.forEach { $0.stop() }
        broker.stop()
        data.remove()
    }

    func root(_ node: String) -> String { data.path + "/" + node }

    func start(_ node: String, registering service: String) throws {
        workers[node] = try LyceumProcess([
            "worker", "--broker", endpoint, "--forwarder-endpoint", try freeLoopbackEndpoint(), "--partitions", "8", "--node", node,
            "--data", root(node), "--service", "books", "--service", "progress", "--sessions", "2", "--durability", "always",
        ] + options[node, default: []])
        let client = self.client(timeout: .milliseconds(500))
        defer { client.close() }
        let up = waitUntil(timeout: .seconds(30)) { (try? client.isRegistered(service)) == true && (try? client.isRegistered("lyceum.node.\(node)")) == true }
        try #require(up, "\(node) did not register; stderr:\n\(workers[node]?.standardError ?? "")")
    }

    func client(timeout: Duration) -> Client {
        Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: timeout, attempts: 1), context: try! Context())
    }

    func move(_ arguments: [String]) throws -> (status: Int32?, stdout: String, stderr: String) {
        try LyceumProcess.run(["partitions", "move"] + arguments + ["--broker", endpoint], timeout: .seconds(120))
    }

    func entries(_ node: String, _ service: String = "books") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root(node) + "/" + service)) ?? []).sorted()
    }
}

/// Creates books for a learner of `partition` until stopped, keeping the ids the service acknowledged.
private final class WriteLoad: @unchecked Sendable {
    let acknowledged = Mutex<[String]>([])
    let failures = Mutex<[String]>([])
    private let running = Mutex(true)
    private var thread: ThreadResult<Void>?

    init(_ cluster: TwoWorkerCluster, partition: Int) {
        let learner = PartitionedCluster.learner(in: partition)
        let endpoint = cluster.endpoint
        thread = ThreadResult("load-p\(partition)") { [self] in
            let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(30), attempts: 1), context: try Context())
            defer { client.close() }
            var number = 0
            while running.withLock({ $0 }) {
                number += 1
                let body = #"{"op":"create","learner":"\#(learner)","title":"T\#(number)","author":"A","genre":"Fantasy","rating":3}"#
                do {
                    let reply = try parse(try client.call("books.p\(partition)", body: [Array(body.utf8)])[0])
                    if let id = (reply.result["book"] as? [String: Any])?["id"] as? String { acknowledged.withLock { $0.append(id) } }
                    else { failures.withLock { $0.append("\(reply)") } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
    }

    func stop() throws {
        running.withLock { $0 = false }
        try thread?.value(within: .seconds(60))
    }
}

@Suite(.serialized) struct PartitionMoveEndToEndTests {
    @Test func aPartitionMovesUnderWriteLoadAndEveryAcknowledgedWriteIsReadableFromTheNewOwner() throws {
        let cluster = try TwoWorkerCluster()
        let moving = WriteLoad(cluster, partition: 2)
        let other = WriteLoad(cluster, partition: 1)
        #expect(waitUntil(timeout: .seconds(30)) { moving.acknowledged.withLock { $0.count } >= 20 })

        let moved = try cluster.move(["2", "--to", "w2", "--service", "books"])

        #expect(moved.status == 0, "\(moved.stdout)\n\(moved.stderr)")
        let before = moving.acknowledged.withLock { $0.count }
        #expect(waitUntil(timeout: .seconds(30)) { moving.acknowledged.withLock { $0.count } >= before + 20 }, "writes go on at the new owner")
        try moving.stop()
        try other.stop()
        #expect(moving.failures.withLock { $0 } == [], "requests of the moving partition were delayed, not lost")
        #expect(other.failures.withLock { $0 } == [], "the other partitions were unaffected")

        let learner = PartitionedCluster.learner(in: 2)
        let client = cluster.client(timeout: .seconds(10))
        defer { client.close() }
        for id in moving.acknowledged.withLock({ $0 }) {
            let reply = try parse(try client.call("books.p2", body: [Array(#"{"op":"get","learner":"\#(learner)","id":"\#(id)"}"#.utf8)])[0])
            #expect(reply.isOK, "\(id): \(reply)")
        }
        #expect(cluster.entries("w2").contains("p2"))
        #expect(!cluster.entries("w1").contains("p2"))
        #expect(cluster.entries("w1").contains { $0.hasPrefix("p2.moved-to-w2-") })
        let describe = try parse(try client.call("lyceum.node.w1", body: [Array(#"{"op":"describe"}"#.utf8)])[0])
        let held = (describe.result["held"] as? [[String: Any]] ?? []).filter { $0["service"] as? String == "books" }.compactMap { $0["partition"] as? Int }
        #expect(held == [0, 1, 3], "\(describe)")
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
        let cluster = try TwoWorkerCluster(options: options)
        let learner = PartitionedCluster.learner(in: 2)
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let client = cluster.client(timeout: .seconds(10))
        defer { client.close() }
        let begun = try parse(try client.call("progress.p2", body: [Array(#"{"op":"begin_course","learner":"\#(learner)","course":"\#(course.id)"}"#.utf8)])[0])
        #expect(begun.isOK, "\(begun)")
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
    private static func snapshotLearners(_ endpoint: String, context: Context) throws -> Set<String> {
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

    @Test func aMoveToAnUnknownNodeFailsCleanlyAndThePartitionKeepsBeingServed() throws {
        let cluster = try TwoWorkerCluster()
        let moved = try cluster.move(["2", "--to", "w9", "--service", "books"])
        #expect(moved.status == 1, "\(moved.stdout)\n\(moved.stderr)")
        #expect(cluster.entries("w1").contains("p2"))
        let client = cluster.client(timeout: .seconds(10))
        defer { client.close() }
        #expect(try client.isRegistered("books.p2"))
    }

    @Test func theSourceKilledMidTransferServesThePartitionAloneAfterItsRestart() throws {
        let cluster = try TwoWorkerCluster()
        // A large file in the partition's directory makes the copy take long enough to cut.
        let padding = cluster.root("w1") + "/books/p2/padding"
        FileManager.default.createFile(atPath: padding, contents: Data(repeating: 7, count: 96 << 20))
        let mover = ThreadResult("move") { try cluster.move(["2", "--to", "w2", "--service", "books", "--timeout", "5000"]) }
        #expect(waitUntil(timeout: .seconds(60)) { cluster.entries("w2").contains("p2.incoming") })
        _ = cluster.workers["w1"]?.signal(SIGKILL)
        let outcome = try mover.value(within: .seconds(120))
        #expect(outcome.status == 3, "no answer from the killed source: \(outcome.stdout)\n\(outcome.stderr)")
        #expect(cluster.entries("w1").contains("p2"))
        #expect(!cluster.entries("w2").contains("p2"))

        try cluster.start("w1", registering: "books.p2")
        let client = cluster.client(timeout: .seconds(10))
        defer { client.close() }
        let describe = try parse(try client.call("lyceum.node.w2", body: [Array(#"{"op":"describe"}"#.utf8)])[0])
        let held = (describe.result["held"] as? [[String: Any]] ?? []).filter { $0["service"] as? String == "books" }.compactMap { $0["partition"] as? Int }
        #expect(held == [4, 5, 6, 7], "w2 never adopted it: \(describe)")
    }
}
