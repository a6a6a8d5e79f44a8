import Foundation
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// A real etcd, a broker, and three `lyceum worker` replicas of books (one partition, R = 3) on
/// loopback, the workers started under `launcher` (`fiu-run -x`, say); stopped with the test.
final class ReplicaTrio: @unchecked Sendable {
    static let nodes = ["w1", "w2", "w3"]
    let etcd: EtcdServer
    let data: TemporaryDirectory
    let endpoint: String
    private let forwarder: String
    let broker: LyceumProcess
    private(set) var workers: [String: LyceumProcess] = [:]
    private var ports: [String: Int] = [:]

    init(launcher: [String] = []) throws {
        etcd = try EtcdServer()
        data = try TemporaryDirectory()
        endpoint = try freeLoopbackEndpoint()
        forwarder = try freeLoopbackEndpoint()
        broker = try LyceumProcess([
            "broker", "--endpoint", endpoint, "--forwarder-endpoint", forwarder, "--events-endpoint", try freeLoopbackEndpoint(),
            "--partitions", "1", "--unknown-service-timeout", "10000",
        ])
        for node in Self.nodes { try start(node, launcher: launcher) }
        try waitUntilServing(["books.p0"], at: endpoint) { self.logs }
    }

    deinit {
        for worker in workers.values { worker.stop() }
        broker.stop()
        etcd.remove()
        data.remove()
    }

    /// Starts `node`'s worker under `launcher`, its data kept from an earlier run.
    func start(_ node: String, launcher: [String] = []) throws {
        let root = data.path + "/" + node
        if !FileManager.default.fileExists(atPath: root) {
            let initialized = try LyceumProcess.run(["partitions", "init", "--data", root, "--partitions", "1", "--own", "0-0", "--service", "books"])
            try #require(initialized.status == 0, "\(initialized.stderr)")
        }
        let port = try ports[node] ?? freeLoopbackPorts(count: 1)
        ports[node] = port
        workers[node] = try LyceumProcess([
            "worker", "--broker", endpoint, "--forwarder-endpoint", forwarder, "--partitions", "1", "--node", node,
            "--data", root, "--service", "books", "--sessions", "2", "--durability", "always",
            "--replicas", "3", "--etcd-endpoint", etcd.endpoint, "--replication-endpoint", "tcp://127.0.0.1:\(port)",
            "--lease-ttl", "2", "--lease-keep-alive", "500", "--lease-retry", "700",
        ], launcher: launcher)
    }

    var logs: String { workers.sorted { $0.key < $1.key }.map { "\($0.key):\n\($0.value.standardError)" }.joined(separator: "\n") }

    /// The node leading books.p0 now, among those running: the one whose last leadership line says it leads.
    func leader(excluding: Set<String> = []) throws -> String {
        var found: String?
        _ = eventually {
            found = workers.first { node, worker in
                guard !excluding.contains(node), worker.isRunning else { return false }
                let lines = worker.standardError.split(separator: "\n").filter { $0.contains("partition led") || $0.contains("partition no longer led") }
                return lines.last?.contains("partition led") == true
            }?.key
            return found != nil
        }
        return try #require(found, "no leader among \(workers.keys.sorted()) but \(excluding):\n\(logs)")
    }

    /// One `books` request through the broker, one attempt of `timeout`; its reply parsed.
    func call(_ json: String, timeout: Duration = .seconds(10)) throws -> [String: Any] {
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: timeout, attempts: 1), context: try Context())
        defer { client.close() }
        let reply = try client.call("books", body: [Array(json.utf8)])
        try #require(reply.count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(reply[0]))
        return try #require(object as? [String: Any])
    }

    /// Lists ada's books and expects each title of `acknowledged` there exactly once.
    func expectEveryAcknowledgedBookOnce(_ acknowledged: [String]) throws {
        var titles: [String: Int] = [:]
        var cursor: String?
        repeat {
            let page = try call(#"{"op":"list","learner":"ada","limit":100\#(cursor.map { #","cursor":"\#($0)""# } ?? "")}"#)
            try #require(page.isOK, "\(page)")
            for book in page.result["books"] as? [[String: Any]] ?? [] { titles[book["title"] as? String ?? "", default: 0] += 1 }
            cursor = page.result["next_cursor"] as? String
        } while cursor != nil
        let missing = acknowledged.filter { titles[$0] == nil }
        #expect(missing.isEmpty, "acknowledged and lost: \(missing.prefix(10))")
        #expect(titles.filter { $0.value > 1 }.isEmpty, "applied twice: \(titles.filter { $0.value > 1 }.keys.prefix(10))")
        print("\(acknowledged.count) acknowledged, \(titles.count) stored, \(missing.count) lost")
    }
}

/// Creates books `prefix-N` for ada through the broker, one at a time, each retried under its
/// `request_id` until acknowledged; records the titles acknowledged.
final class RetryingWriter: Sendable {
    private final class Shared: Sendable {
        let acks = Mutex<[String]>([])
        let stopping = Atomic(false)
    }

    private let shared = Shared()
    private let done: ThreadResult<Void>

    init(endpoint: String, prefix: String = "book") {
        let shared = shared
        done = ThreadResult("writer") {
            let context = try Context()
            var number = 0
            while !shared.stopping.load(ordering: .relaxed) {
                number += 1
                let title = "\(prefix)-\(number)"
                let body = Array(createBook(learner: "ada", title: title, requestID: title).utf8)
                while !shared.stopping.load(ordering: .relaxed) {
                    let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(2), attempts: 1), context: context)
                    defer { client.close() }
                    // A time-out or an error reply: the same request is sent again, the ledger answers it once.
                    if let reply = try? client.call("books", body: [body]), reply.count == 1,
                       let parsed = try? JSONSerialization.jsonObject(with: Data(reply[0])) as? [String: Any], parsed.isOK {
                        shared.acks.withLock { $0.append(title) }
                        break
                    }
                }
            }
        }
    }

    var count: Int { shared.acks.withLock { $0.count } }
    var acknowledged: [String] { shared.acks.withLock { $0 } }

    /// Stops after the write in hand.
    func stop() throws {
        shared.stopping.store(true, ordering: .relaxed)
        try done.value()
    }
}
