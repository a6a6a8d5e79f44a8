import Foundation
import LyceumTestSupport
import Testing

/// etcd, a broker and replicating workers (`w1`–`w3`, each holding both partitions of books,
/// R = 3) on loopback, each process of the build it was last started with. Stopped by ``stop()``.
final class UpgradeCluster: @unchecked Sendable {
    static let partitions = 2
    let etcd: EtcdServer
    let data: TemporaryDirectory
    let endpoint: String
    private let forwarder: String
    private let eventsEndpoint: String
    /// Each node's (and the broker's) process now, and the build it runs.
    private(set) var processes: [String: (process: ChildProcess, binary: String)] = [:]
    /// What every process started so far wrote on stderr, processes replaced included.
    private var earlierLogs = ""
    private var metricsPorts: [String: Int] = [:]
    private(set) var replicationEndpoints: [String: String] = [:]

    /// Starts etcd, the broker and `nodes` on `binary`, and waits until every partition is served.
    init(binary: String, nodes: [String] = ["w1", "w2", "w3"]) throws {
        etcd = try EtcdServer()
        data = try TemporaryDirectory()
        endpoint = try freeLoopbackEndpoint()
        forwarder = try freeLoopbackEndpoint()
        eventsEndpoint = try freeLoopbackEndpoint()
        try start("broker", with: binary)
        for node in nodes { try start(node, with: binary) }
        if nodes.count == 3 { try waitUntilServing((0..<Self.partitions).map { "books.p\($0)" }, at: endpoint) { self.logs } }
    }

    /// Which build each process runs (`old`/`new` by path's end).
    var builds: String {
        processes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.binary.contains("/releases/") ? "old" : "new")" }.joined(separator: ", ")
    }

    /// Starts `name` (`broker`, or a worker node) on `binary`, its data kept from an earlier run.
    func start(_ name: String, with binary: String) throws {
        guard name != "broker" else {
            processes[name] = (try ChildProcess(binary, [
                "broker", "--endpoint", endpoint, "--forwarder-endpoint", forwarder, "--events-endpoint", eventsEndpoint,
                "--partitions", String(Self.partitions), "--unknown-service-timeout", "10000",
            ]), binary)
            return
        }
        let root = data.path + "/" + name
        if !FileManager.default.fileExists(atPath: root) {
            let initialized = try Command.run(binary, ["partitions", "init", "--data", root, "--partitions", String(Self.partitions),
                                                       "--own", "0-\(Self.partitions - 1)", "--service", "books"], timeout: .seconds(60))
            try #require(initialized.succeeded, "\(initialized)")
        }
        let metrics = try metricsPorts[name] ?? freeLoopbackPorts(count: 1)
        metricsPorts[name] = metrics
        let replication = try replicationEndpoints[name] ?? freeLoopbackEndpoint()
        replicationEndpoints[name] = replication
        processes[name] = (try ChildProcess(binary, [
            "worker", "--broker", endpoint, "--forwarder-endpoint", forwarder, "--partitions", String(Self.partitions), "--node", name,
            "--data", root, "--service", "books", "--sessions", "2", "--replicas", "3", "--etcd-endpoint", etcd.endpoint,
            "--replication-endpoint", replication, "--lease-ttl", "2", "--lease-keep-alive", "500", "--lease-retry", "700",
            "--metrics-port", String(metrics),
        ]), binary)
    }

    /// Stops `name` with SIGTERM (a graceful stop: it must exit 0), starts it on `binary`, and
    /// waits until a worker answers `/readyz` 200 and every partition is served again.
    func restart(_ name: String, with binary: String) throws {
        let current = try #require(processes[name])
        let status = current.process.signal(SIGTERM)
        earlierLogs += "== \(name) (\(current.binary))\n" + current.process.standardError
        #expect(status == 0, "\(name) did not stop cleanly: \(String(describing: status))\n\(current.process.standardError)")
        try start(name, with: binary)
        if let port = metricsPorts[name] {
            #expect(eventually { Self.get("http://127.0.0.1:\(port)/readyz")?.contains("\"ready\"") == true }, "\(name) never became ready\n\(logs)")
        }
        try waitUntilServing((0..<Self.partitions).map { "books.p\($0)" }, at: endpoint) { self.logs }
    }

    /// The value of the series `series` (name and labels, as exposed) in `node`'s metrics.
    func metric(_ series: String, of node: String) throws -> Double? {
        let port = try #require(metricsPorts[node])
        let text = Self.get("http://127.0.0.1:\(port)/metrics") ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// The workers running `binary`.
    func workersOf(_ binary: String) -> Set<String> {
        Set(processes.filter { $0.key != "broker" && $0.value.binary == binary }.keys)
    }

    /// The nodes with a formats entry in etcd (`lyceum/formats/<node>`), read with etcdctl.
    func publishedFormats() -> Set<String> {
        // An etcdctl that cannot run reads as no entry: the caller's expectation then fails, naming it.
        guard let listed = try? Command.run("/usr/bin/env", ["ETCDCTL_API=3", "etcdctl", "--endpoints", etcd.endpoint, "get", "--prefix",
                                                             "lyceum/formats/", "--keys-only"], timeout: .seconds(30)), listed.succeeded else { return [] }
        return Set(listed.standardOutput.split(separator: "\n").map { String($0.dropFirst("lyceum/formats/".count)) })
    }

    /// Starts the ledger writer (Clients/ledger.py, plaintext) through the broker until `until` exists.
    func startWriting(to ledger: String, learners: [String], until: String) -> ThreadResult<WriteReport> {
        let run = URL(fileURLWithPath: ledger).deletingPathExtension().lastPathComponent
        return ThreadResult("ledger") { [self] in
            try self.ledger("write", ["--out", ledger, "--run", run, "--learners", learners.joined(separator: ","), "--seconds", "600",
                                      "--until", until, "--timeout", "2", "--attempts", "15"], timeout: .seconds(660))
        }
    }

    /// Reads every book of `ledgers` back through the broker.
    func verify(_ ledgers: [String]) throws -> VerifyReport {
        try ledger("verify", ["--ledger"] + ledgers, timeout: .seconds(120))
    }

    private func ledger<Report: Decodable>(_ command: String, _ arguments: [String], timeout: Duration) throws -> Report {
        let result = try Command.run("/usr/bin/python3", [NetnsCluster.ledgerScript, command, "--brokers", endpoint] + arguments,
                                     environment: ["PYTHONPATH": NetnsCluster.pythonClient], timeout: timeout)
        // What does not decode is thrown with everything the client printed.
        guard result.succeeded, let report = try? JSONDecoder().decode(Report.self, from: Data(result.standardOutput.utf8)) else {
            throw ClusterError(what: "ledger.py \(command)", result: result)
        }
        return report
    }

    /// The record lines of every partition's journal on `node`.
    func records(on node: String, partition: Int) -> [Substring] {
        // A journal not there (yet) holds no record: a comparison then fails, naming the counts.
        let text = (try? String(contentsOfFile: "\(data.path)/\(node)/books/p\(partition)/journal.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.contains(#""seq":"#) }
    }

    /// Records per replica of every partition, in all (w1's).
    var recordCount: Int { (0..<Self.partitions).reduce(0) { $0 + records(on: "w1", partition: $1).count } }

    /// Waits (within the hang limit) until w1-w3 hold the same record lines in every partition;
    /// returns what still differs ([] once they do).
    func awaitConvergence() -> [String] {
        var differences: [String] = []
        _ = eventually(timeout: .hangLimit) {
            differences = (0..<Self.partitions).compactMap { partition in
                let journals = ["w1", "w2", "w3"].map { records(on: $0, partition: partition) }
                return Set(journals.map { $0.joined(separator: "\n") }).count == 1 ? nil : "books.p\(partition): \(journals.map(\.count)) records"
            }
            return differences.isEmpty
        }
        return differences
    }

    /// Every process's stderr, those replaced included.
    var logs: String {
        earlierLogs + processes.sorted { $0.key < $1.key }.map { "== \($0.key) (\($0.value.binary))\n\($0.value.process.standardError)" }.joined(separator: "\n")
    }

    func stop() {
        for entry in processes.values { entry.process.stop() }
        etcd.remove()
        data.remove()
    }

    /// The body of `GET url` (curl), or `nil` when it did not answer.
    static func get(_ url: String) -> String? {
        // A curl that cannot run is a server that did not answer: callers wait for an answer.
        guard let result = try? Command.run("/usr/bin/env", ["curl", "-s", "--max-time", "5", url], timeout: .seconds(30)), result.succeeded else { return nil }
        return result.standardOutput
    }
}
