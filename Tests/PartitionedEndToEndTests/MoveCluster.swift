import Catalog
import Foundation
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// A broker and partitioned workers, real processes on loopback: w1 holds partitions 0-3, w2
/// holds 4-7 (of 8), and more nodes may join empty (`join`). `lyceum partitions move` and
/// `rebalance` move partitions between them while they serve.
final class MoveCluster: @unchecked Sendable {
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

    /// The command line of the worker `node`, with its options and `extra`.
    func workerArguments(_ node: String, _ extra: [String] = []) throws -> [String] {
        [
            "worker", "--broker", endpoint, "--forwarder-endpoint", try freeLoopbackEndpoint(), "--partitions", "8", "--node", node,
            "--data", root(node), "--service", "books", "--service", "progress", "--sessions", "2", "--durability", "always",
        ] + options[node, default: []] + extra
    }

    /// Starts the worker `node` (through `launcher`, with `extra` options) and waits until it
    /// registered `service` and its node service.
    func start(_ node: String, registering service: String, extra: [String] = [], launcher: [String] = []) throws {
        let worker = try LyceumProcess(try workerArguments(node, extra), launcher: launcher)
        workers[node] = worker
        try waitUntilServing([service, "lyceum.node.\(node)"], at: endpoint) { "\(node)'s stderr:\n\(worker.standardError)" }
    }

    /// Starts the worker `node` with an empty data directory and `--join`: it registers its node service only.
    func join(_ node: String, extra: [String] = [], launcher: [String] = []) throws {
        try start(node, registering: "lyceum.node.\(node)", extra: ["--join"] + extra, launcher: launcher)
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

    /// Has a learner of `partition` begin a course (a progress record, in the snapshots of the
    /// node serving `progress.p<partition>`); returns the learner.
    func beginCourse(partition: Int) throws -> String {
        let learner = PartitionedCluster.learner(in: partition)
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let client = self.client(timeout: .seconds(10))
        defer { client.close() }
        let body = #"{"op":"begin_course","learner":"\#(learner)","course":"\#(course.id)"}"#
        let begun = try parse(try client.call("progress.p\(partition)", body: [Array(body.utf8)])[0])
        try #require(begun.isOK, "\(begun)")
        return learner
    }

    /// The partitions of `service` that `node`'s `describe` lists as held.
    func held(_ node: String, _ service: String = "books") throws -> [Int] {
        let client = self.client(timeout: .seconds(10))
        defer { client.close() }
        let describe = try parse(try client.call("lyceum.node.\(node)", body: [Array(#"{"op":"describe"}"#.utf8)])[0])
        try #require(describe.isOK, "\(describe)")
        return (describe.result["held"] as? [[String: Any]] ?? []).filter { $0["service"] as? String == service }.compactMap { $0["partition"] as? Int }
    }
}

/// Creates books for a learner of `partition` until stopped, keeping the ids the service acknowledged.
final class WriteLoad: @unchecked Sendable {
    let acknowledged = Mutex<[String]>([])
    let failures = Mutex<[String]>([])
    let partition: Int
    private let running = Mutex(true)
    private var thread: ThreadResult<Void>?

    init(_ cluster: MoveCluster, partition: Int) {
        self.partition = partition
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
        try thread?.value()
    }

    /// The acknowledged books that `books.p<partition>` does not return now, with the reply for each.
    func unreadable(in cluster: MoveCluster) throws -> [String] {
        let learner = PartitionedCluster.learner(in: partition)
        let client = cluster.client(timeout: .seconds(10))
        defer { client.close() }
        return try acknowledged.withLock { $0 }.compactMap { id in
            let reply = try parse(try client.call("books.p\(partition)", body: [Array(#"{"op":"get","learner":"\#(learner)","id":"\#(id)"}"#.utf8)])[0])
            return reply.isOK ? nil : "\(id): \(reply)"
        }
    }
}
