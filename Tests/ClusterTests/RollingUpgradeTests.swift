import Foundation
import LyceumTestSupport
import Testing

/// Issue 35's rolling upgrade, on loopback with a real etcd: a replicated cluster (one broker,
/// three workers holding every partition of books) started on the previous release's build
/// (tag `release-2026-12-07`, built once from a `git worktree` by `scripts/release-build.sh` and
/// cached by commit), upgraded host by host to the build under test while a client writes
/// through the broker with retries, the broker last, then one worker downgraded back. After each
/// step: no request failed, every acknowledged write so far is read back once, the three
/// journals hold the same record lines, and no process refused a replication message (the
/// builds never misread each other). And the refusal itself: a peer speaking a format version
/// this build does not read is refused, with the log line and the metric.
@Suite(.serialized, .offTheCooperativePool)
struct RollingUpgradeTests {
    /// The release the cluster starts on, and its commit if the tag is not in this clone.
    static let release = ["release-2026-12-07", "886ee9d"]

    /// Why the upgrade cannot run here (no etcd, no git history of the release), or `nil`.
    static let upgradeUnavailability: String? = {
        guard FileManager.default.isExecutableFile(atPath: EtcdServer.executable) else { return "needs Debian's etcd-server (scripts/ensure-deps.sh test)" }
        guard pythonHasZMQ else { return "the writer needs /usr/bin/python3 with pyzmq (scripts/ensure-deps.sh test)" }
        guard releaseRevision != nil else { return "this clone has neither the tag \(release[0]) nor its commit \(release[1]) (a shallow clone?)" }
        return nil
    }()

    /// The first of ``release`` this clone has.
    static let releaseRevision: String? = release.first { revision in
        // A git that cannot run finds no revision: the test is skipped, saying so.
        let found = try? Command.run("/usr/bin/env", ["git", "-C", NetnsCluster.repository.path, "rev-parse", "--verify", "--quiet", "\(revision)^{commit}"], timeout: .seconds(30))
        return found?.succeeded == true
    }

    @Test(.enabled(if: upgradeUnavailability == nil, Comment(rawValue: upgradeUnavailability ?? "")))
    func aClusterUpgradedHostByHostFromTheLastReleaseAndDowngradedLosesNothing() throws {
        let old = try Self.releaseBinary()
        let new = LyceumProcess.executable.path
        let cluster = try UpgradeCluster(binary: old)
        defer { cluster.stop() }
        let learners = (0..<12).map { "upgrade-\($0)" }
        var ledgers: [String] = []
        for (step, (host, binary, what)) in [("w1", new, "upgraded"), ("w2", new, "upgraded"), ("w3", new, "upgraded"), ("broker", new, "upgraded"),
                                             ("w2", old, "downgraded")].enumerated() {
            let ledger = cluster.data.path + "/step\(step).jsonl"
            ledgers.append(ledger)
            let done = ledger + ".done"
            let load = cluster.startWriting(to: ledger, learners: learners, until: done)
            #expect(eventually { ReplicatedClusterTests.lineCount(of: ledger) > 20 }, "no write acknowledged before \(host) was \(what)\n\(cluster.logs)")
            try cluster.restart(host, with: binary)
            let acknowledged = ReplicatedClusterTests.lineCount(of: ledger)
            #expect(eventually { ReplicatedClusterTests.lineCount(of: ledger) > acknowledged + 20 }, "no write acknowledged after \(host) was \(what)\n\(cluster.logs)")
            try #require(FileManager.default.createFile(atPath: done, contents: nil))
            let written = try load.value(within: .hangLimit)
            #expect(written.wrong == 0 && written.errors.isEmpty, "\(written)\n\(cluster.logs)")
            let verified = try cluster.verify(ledgers)
            #expect(verified.isComplete, "\(verified)")
            let differences = cluster.awaitConvergence()
            #expect(differences.isEmpty, "the journals differ after \(host) was \(what): \(differences)")
            // Each worker of this build says what it reads; one of the release says nothing, so it is spoken version 1.
            var published: Set<String> = []
            #expect(eventually { published = cluster.publishedFormats(); return published == cluster.workersOf(new) },
                    "formats published by \(published), workers of this build \(cluster.workersOf(new))")
            print("rolling upgrade: \(host) \(what) (\(cluster.builds)): \(written.acknowledged) acknowledged, longest wait \(written.longestWait ?? -1) s, "
                  + "errors \(written.errors); \(verified.checked) read back so far, \(verified.missing) missing, \(verified.duplicates) twice; "
                  + "journals equal: \(differences.isEmpty) (\(cluster.recordCount) records each)")
        }
        let refusals = cluster.logs.split(separator: "\n").filter { $0.contains("refused a replication message") || $0.contains("refused a message from the leader") }
        #expect(refusals.isEmpty, "a build refused the other's messages: \(refusals.prefix(5))")
    }

    /// A follower of this build's leader that speaks replication format v99: the leader refuses
    /// every such message before reading anything else of it, logs why, and counts it.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: EtcdServer.executable) && pythonHasZMQ, "needs etcd and pyzmq"))
    func aPeerSpeakingAnUnknownFormatVersionIsRefusedLoggedAndCounted() throws {
        let cluster = try UpgradeCluster(binary: LyceumProcess.executable.path, nodes: ["w1"])
        defer { cluster.stop() }
        let endpoint = try #require(cluster.replicationEndpoints["w1"])
        // Once the worker leads, its replication ROUTER takes follows (it waits for a majority).
        #expect(eventually { cluster.logs.contains("leadership") && cluster.logs.contains("leader(epoch:") }, "w1 never led\n\(cluster.logs)")
        let follow = #"{"v":99,"op":"follow","partition":"books.p0","epoch":1,"position":{"epoch":0,"seq":0},"node":"w9","meaning":"unknown to v2"}"#
        let peer = try Command.run("/usr/bin/python3", ["-c", """
            import sys, time, zmq
            socket = zmq.Context().socket(zmq.DEALER)
            socket.setsockopt(zmq.LINGER, 1000)
            socket.connect(sys.argv[1])
            for _ in range(5):
                socket.send(sys.argv[2].encode())
                time.sleep(0.2)
            socket.close()
            """, endpoint, follow], timeout: .seconds(60))
        try #require(peer.succeeded, "\(peer)")
        #expect(eventually { cluster.logs.contains("unsupported_version: a peer speaks replication format v99") }, "no refusal logged\n\(cluster.logs)")
        let line = cluster.logs.split(separator: "\n").first { $0.contains("format v99") }.map(String.init) ?? ""
        print("unknown format version: w1 logged \(line)")
        var count = 0.0
        #expect(eventually {
            // Not answering yet counts as none counted: the wait goes on.
            count = (try? cluster.metric("lyceum_replication_unsupported_versions_total{version=\"99\"}", of: "w1")) ?? 0
            return count >= 1
        }, "the refusal was not counted")
        print("unknown format version: lyceum_replication_unsupported_versions_total{version=\"99\"} \(count)")
    }

    /// The previous release's `lyceum`, built once and cached (`scripts/release-build.sh`).
    static func releaseBinary() throws -> String {
        let revision = try #require(releaseRevision)
        let started = ContinuousClock.now
        let built = try Command.run(NetnsCluster.repository.appendingPathComponent("scripts/release-build.sh").path, [revision], timeout: .seconds(3600))
        try #require(built.succeeded, "\(built)")
        print("rolling upgrade: \(revision)'s lyceum at \(built.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) "
              + "(\(ContinuousClock.now - started) to find or build)")
        return built.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

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
