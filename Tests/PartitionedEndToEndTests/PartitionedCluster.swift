import Foundation
import LyceumTestSupport
import Majordomo
import Partitions
import Testing
import ZeroMQ

/// `lyceum broker` and one partitioned `lyceum worker` (node `w1`, 8 partitions) on free
/// loopback ports, the worker's data directory made by `lyceum partitions init`.
final class PartitionedCluster: @unchecked Sendable {
    static let scheme = try! PartitionScheme(count: 8)
    /// What the worker registers when it holds partitions 0-3 of both services.
    static let servicesOfPartitions0to3 = (0...3).flatMap { ["books.p\($0)", "progress.p\($0)"] } + ["lyceum.node.w1"]
    let data: TemporaryDirectory
    let endpoint: String
    let forwarder: String
    /// Where the broker's forwarder republishes the worker's events.
    let events: String
    let broker: LyceumProcess
    private(set) var worker: LyceumProcess?

    /// The data directory of the worker.
    var root: String { data.path + "/d" }

    /// Starts the broker, and creates the worker's partitions `owned` (not started yet).
    init(owned: String) throws {
        data = try TemporaryDirectory()
        endpoint = try freeLoopbackEndpoint()
        forwarder = try freeLoopbackEndpoint()
        events = try freeLoopbackEndpoint()
        let initialized = try LyceumProcess.run(["partitions", "init", "--data", data.path + "/d", "--partitions", "8", "--own", owned])
        try #require(initialized.status == 0, "\(initialized.stderr)")
        broker = try LyceumProcess([
            "broker", "--endpoint", endpoint, "--forwarder-endpoint", forwarder, "--events-endpoint", events,
            "--partitions", "8",
        ])
    }

    deinit {
        worker?.stop()
        broker.stop()
        data.remove()
    }

    /// The worker's command line.
    var workerArguments: [String] {
        ["worker", "--broker", endpoint, "--forwarder-endpoint", forwarder, "--partitions", "8", "--node", "w1", "--data", root,
         "--service", "books", "--service", "progress", "--sessions", "1"]
    }

    /// Starts the worker (with `arguments` added) and waits until `services` are registered.
    func startWorker(registering services: [String], arguments: [String] = []) throws {
        let worker = try LyceumProcess(workerArguments + arguments)
        self.worker = worker
        try waitUntilServing(services, at: endpoint) { "the worker's stderr:\n\(worker.standardError)" }
    }

    /// Kills the worker with `signal` and waits for it to be gone.
    func killWorker(_ signal: Int32 = SIGKILL) {
        worker?.signal(signal)
        worker = nil
    }

    /// One request to `service`, its reply parsed.
    func call(_ service: String, _ json: String) throws -> [String: Any] {
        let client = try Self.client(endpoint, timeout: .seconds(5))
        defer { client.close() }
        let reply = try client.call(service, body: [Array(json.utf8)])
        try #require(reply.count == 1)
        return try parse(reply[0])
    }

    /// Whether the broker has a worker for `service`.
    func isRegistered(_ service: String) throws -> Bool {
        let client = try Self.client(endpoint, timeout: .seconds(5))
        defer { client.close() }
        return try client.isRegistered(service)
    }

    /// A learner id whose partition is `partition`, distinct for each `index`.
    static func learner(in partition: Int, index: Int = 0) -> String {
        var found = 0
        for number in 0... {
            let learner = "learner-\(number)"
            guard scheme.partition(ofLearner: learner) == partition else { continue }
            if found == index { return learner }
            found += 1
        }
        fatalError("unreachable")
    }

    private static func client(_ endpoint: String, timeout: Duration) throws -> Client {
        Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: timeout, attempts: 1), context: try Context())
    }
}
