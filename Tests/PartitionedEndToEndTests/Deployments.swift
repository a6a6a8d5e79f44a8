import Catalog
import Foundation
import LyceumTestSupport
import Majordomo
import PartitionOperations
import Partitions
import Synchronization
import Testing
import ZeroMQ

/// The partitioned deployments of these tests, each a ``Deployment`` made one way: a broker of 8
/// partitions and one worker (``partitioned(owned:)``), two workers between which partitions move
/// (``moving(options:)``), and replicas of every partition over etcd (``replicated(keys:nodes:partitions:workerArguments:)``).
extension Deployment {
    static let scheme = try! PartitionScheme(count: 8)
    /// What worker `w1` registers when it holds partitions 0-3 of both services.
    static let servicesOfPartitions0to3 = (0...3).flatMap { ["books.p\($0)", "progress.p\($0)"] } + [NodeService.namePrefix + "w1"]

    /// A learner id whose partition (of 8) is `partition`, distinct for each `index`.
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

    // MARK: One partitioned worker

    /// `lyceum broker --partitions 8` and the data of worker `w1` (books and progress, one
    /// session) with partitions `owned` made; the worker is started by ``startWorker(registering:arguments:)``.
    static func partitioned(owned: String) throws -> Deployment {
        let deployment = try Deployment.broker(partitions: 8)
        deployment.workerOptions = { _ in ["--service", "books", "--service", "progress", "--sessions", "1"] }
        try deployment.initializePartitions("w1", count: 8, owned: owned)
        return deployment
    }

    /// Starts worker `w1` (with `arguments` added) and waits until `services` are registered.
    func startWorker(registering services: [String], arguments: [String] = []) throws {
        try startWorker("w1", arguments, registering: services)
    }

    /// Kills worker `w1` with `signal` and waits for it to be gone.
    func killWorker(_ signal: Int32 = SIGKILL) {
        stop("w1", signal)
    }

    // MARK: Partitions moving between workers

    /// A broker and partitioned workers (books and progress, two sessions, durability `always`,
    /// each node's `options` added): w1 holds partitions 0-3, w2 holds 4-7 (of 8), both started;
    /// more nodes may join empty (``join(_:extra:launcher:)``). `lyceum partitions move` and
    /// `rebalance` move partitions between them while they serve.
    static func moving(options: [String: [String]] = [:]) throws -> Deployment {
        let deployment = try Deployment.broker(partitions: 8)
        deployment.workerOptions = { node in
            ["--service", "books", "--service", "progress", "--sessions", "2", "--durability", "always"] + options[node, default: []]
        }
        for (node, owned) in [("w1", "0-3"), ("w2", "4-7")] { try deployment.initializePartitions(node, count: 8, owned: owned) }
        try deployment.start("w1", registering: "books.p0")
        try deployment.start("w2", registering: "books.p4")
        return deployment
    }

    /// Starts the worker `node` (through `launcher`, with `extra` options) and waits until it
    /// registered `service` and its node service.
    func start(_ node: String, registering service: String, extra: [String] = [], launcher: [String] = []) throws {
        try startWorker(node, extra, launcher: launcher, registering: [service, NodeService.namePrefix + node])
    }

    /// Starts the worker `node` with an empty data directory and `--join`: it registers its node service only.
    func join(_ node: String, extra: [String] = [], launcher: [String] = []) throws {
        try start(node, registering: NodeService.namePrefix + node, extra: ["--join"] + extra, launcher: launcher)
    }

    /// `lyceum partitions move` with `arguments` through the broker.
    func move(_ arguments: [String]) throws -> (status: Int32?, stdout: String, stderr: String) {
        try LyceumProcess.run(["partitions", "move"] + arguments + ["--broker", endpoint], timeout: .seconds(120))
    }

    /// The entries of `node`'s `service` directory, sorted (none when it does not exist).
    func entries(_ node: String, _ service: String = "books") -> [String] {
        // A directory not made yet is an empty listing: what the tests compare against.
        ((try? FileManager.default.contentsOfDirectory(atPath: root(node) + "/" + service)) ?? []).sorted()
    }

    /// Has a learner of `partition` begin a course (a progress record, in the snapshots of the
    /// node serving `progress.p<partition>`); returns the learner.
    func beginCourse(partition: Int) throws -> String {
        let learner = Deployment.learner(in: partition)
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let begun = try call("progress.p\(partition)", #"{"op":"begin_course","learner":"\#(learner)","course":"\#(course.id)"}"#)
        try #require(begun.isOK, "\(begun)")
        return learner
    }

    /// The partitions of `service` that `node`'s `describe` lists as held.
    func held(_ node: String, _ service: String = "books") throws -> [Int] {
        let describe = try call(NodeService.namePrefix + node, #"{"op":"describe"}"#)
        try #require(describe.isOK, "\(describe)")
        return (describe.result["held"] as? [[String: Any]] ?? []).filter { $0["service"] as? String == service }.compactMap { $0["partition"] as? Int }
    }

    // MARK: Replicas

    /// etcd, a broker and three replicas (`w1`–`w3`) of each partition of books (one unless
    /// told), with 2 s leases; with `keys`, CURVE on every socket: the broker's key is `server`,
    /// each worker's its node's (role `worker`), and each worker's `authorized-keys` is
    /// `keys.replicas` (the other replicas' keys). Starts `nodes` (with `workerArguments` added)
    /// and waits until they serve every partition (unless `nodes` is empty).
    static func replicated(keys: ReplicaKeys? = nil, nodes: [String] = ["w1", "w2", "w3"], partitions: Int = 1, workerArguments: [String] = []) throws -> Deployment {
        let deployment = try Deployment.broker(
            partitions: partitions,
            arguments: ["--unknown-service-timeout", "10000"] + (keys.map { ["--curve-secret-key", $0.secretPath("server"), "--authorized-keys", $0.authorized] } ?? []),
            etcd: true, clientSecurity: try keys?.clientSecurity("admin") ?? .plaintext)
        let etcd = deployment.etcd!.endpoint
        deployment.workerOptions = { node in
            ["--service", "books", "--sessions", "2", "--replicas", "3", "--etcd-endpoint", etcd,
             "--lease-ttl", "2", "--lease-keep-alive", "500", "--lease-retry", "700"]
                + (keys.map { ["--authorized-keys", $0.replicas] + $0.client(node) } ?? []) + workerArguments
        }
        for node in nodes { try deployment.start(node) }
        if !nodes.isEmpty {
            try waitUntilServing((0..<partitions).map { "books.p\($0)" }, at: deployment.endpoint, security: deployment.clientSecurity) { deployment.logs }
        }
        return deployment
    }

    /// Starts replica `node` (its data kept from an earlier run, its metrics port too), over CURVE
    /// with the key of the same name; `joining`, with an empty data directory, holding no
    /// partition until one moves in. Returns at once.
    func start(_ node: String, joining: Bool = false) throws {
        let partitions = self.partitions ?? 1
        if joining {
            try FileManager.default.createDirectory(atPath: root(node), withIntermediateDirectories: true)
        } else if !FileManager.default.fileExists(atPath: root(node)) {
            try initializePartitions(node, count: partitions, owned: "0-\(partitions - 1)", services: ["books"])
        }
        let metrics = try ports[node] ?? freeLoopbackPort()
        ports[node] = metrics
        let replication = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        try startWorker(node, ["--replication-endpoint", replication, "--metrics-port", String(metrics)] + (joining ? ["--join"] : []), registering: [])
    }

    /// Each replica's metrics port.
    var metricsPorts: [String: Int] { ports }

    /// The node leading books.p0 now: the one whose last leadership line says it leads.
    func leader(excluding: Set<String> = []) throws -> String {
        var found: String?
        _ = eventually {
            found = workers.first { node, worker in
                guard !excluding.contains(node) else { return false }
                let lines = worker.standardError.split(separator: "\n").filter { $0.contains("partition led") || $0.contains("partition no longer led") }
                return lines.last?.contains("partition led") == true
            }?.key
            return found != nil
        }
        return try #require(found, "no leader among \(workers.keys.sorted()) but \(excluding):\n\(logs)")
    }

    /// books.p0's row of `lyceum status --json`'s partitions table.
    func statusRow() throws -> [String: Any] {
        let status = try LyceumProcess.run(["status", "--broker", endpoint, "--partitions", String(partitions ?? 1), "--json"])
        try #require(status.status == 0, "\(status.stderr)")
        let table = (try parse(Array(status.stdout.utf8))["partitions"] as? [String: Any])?["table"] as? [[String: Any]] ?? []
        return try #require(table.first { $0["service"] as? String == "books" && $0["partition"] as? Int == 0 }, "\(status.stdout)")
    }

    /// Lists ada's books through the broker and expects each of `acknowledged` there once.
    func expectEveryAcknowledgedBookOnce(_ acknowledged: [(title: String, at: ContinuousClock.Instant)]) throws {
        var titles: [String: Int] = [:]
        var cursor: String?
        repeat {
            let page = try call(#"{"op":"list","learner":"ada","limit":100\#(cursor.map { #","cursor":"\#($0)""# } ?? "")}"#)
            try #require(page.isOK, "\(page)")
            for book in page.result["books"] as? [[String: Any]] ?? [] {
                titles[book["title"] as? String ?? "", default: 0] += 1
            }
            cursor = page.result["next_cursor"] as? String
        } while cursor != nil
        let missing = acknowledged.filter { titles[$0.title] == nil }.map(\.title)
        let doubled = titles.filter { $0.value > 1 }.map(\.key)
        #expect(missing.isEmpty, "acknowledged and lost: \(missing.prefix(10))")
        #expect(doubled.isEmpty, "applied twice: \(doubled.prefix(10))")
    }

    /// One `books` request through the broker (three attempts), its reply parsed.
    func call(_ json: String) throws -> [String: Any] {
        try call("books", json, attempts: 3)
    }
}


/// Creates books for a learner of `partition` until stopped, keeping the ids the service acknowledged.
final class WriteLoad: @unchecked Sendable {
    let acknowledged = Mutex<[String]>([])
    let failures = Mutex<[String]>([])
    let partition: Int
    private let running = Mutex(true)
    private var thread: ThreadResult<Void>?

    init(_ cluster: Deployment, partition: Int) {
        self.partition = partition
        let learner = Deployment.learner(in: partition)
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
    func unreadable(in cluster: Deployment) throws -> [String] {
        let learner = Deployment.learner(in: partition)
        let client = try cluster.client(timeout: .seconds(10))
        defer { client.close() }
        return try acknowledged.withLock { $0 }.compactMap { id in
            let reply = try parse(try client.call("books.p\(partition)", body: [Array(#"{"op":"get","learner":"\#(learner)","id":"\#(id)"}"#.utf8)])[0])
            return reply.isOK ? nil : "\(id): \(reply)"
        }
    }
}
