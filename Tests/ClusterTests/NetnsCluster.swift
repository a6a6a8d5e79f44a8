import Foundation
import LyceumTestSupport
import Partitions

/// A cluster made by `deploy/netns-cluster.sh` for one test: its own namespace prefix, subnet and
/// state directory, so it never meets a user's cluster or another test's. ``down()`` removes
/// everything; call it in a `defer` right after creating one.
final class NetnsCluster: Sendable {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    static let script = repository.appendingPathComponent("deploy/netns-cluster.sh").path
    static let ledgerScript = repository.appendingPathComponent("Tests/ClusterTests/Clients/ledger.py").path
    static let pythonClient = repository.appendingPathComponent("clients/python").path

    /// Why clusters cannot be made here (not root, no `ip`, namespaces refused), or `nil` when they can.
    static let unavailability: String? = {
        guard getuid() == 0 else { return "the cluster tests need root to create network namespaces" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") || FileManager.default.isExecutableFile(atPath: "/sbin/ip") || FileManager.default.isExecutableFile(atPath: "/usr/bin/ip") else {
            return "the cluster tests need iproute2's ip (scripts/ensure-deps.sh test installs it)"
        }
        guard pythonHasZMQ else { return "the cluster tests' client needs /usr/bin/python3 with pyzmq (scripts/ensure-deps.sh test)" }
        let probe = "lyceum-probe-\(getpid())"
        guard let added = try? Command.run("/usr/bin/env", ["ip", "netns", "add", probe], timeout: .seconds(10)), added.succeeded else {
            return "network namespaces cannot be created here (ip netns add failed)"
        }
        _ = try? Command.run("/usr/bin/env", ["ip", "netns", "del", probe], timeout: .seconds(10))
        return nil
    }()

    /// What the `lyceum` under test lacks to run a partitioned cluster (`partitions init`, `broker
    /// --partitions`), or `nil` when it has both; workers registering with both brokers
    /// (multibroker) is needed too, and `up` says so by naming b1's missing registrations.
    static let partitionedClusterMissing: String? = {
        guard lyceumHasPartitionsCommand("init") else { return "this lyceum has no `partitions init` (shardhost's partitioned workers)" }
        let help = try? Command.run(LyceumProcess.executable.path, ["broker", "--help"], timeout: .seconds(20))
        guard help?.standardOutput.contains("--partitions") == true else { return "this lyceum's broker has no --partitions (shardroute's routing)" }
        return nil
    }()

    /// Whether the `lyceum` under test has the subcommand `lyceum partitions <name>` (its
    /// `partitions --help` lists it; an unknown name's `--help` shows the same list and exits 0).
    static func lyceumHasPartitionsCommand(_ name: String) -> Bool {
        guard let help = try? Command.run(LyceumProcess.executable.path, ["partitions", "--help"], timeout: .seconds(20)) else { return false }
        return help.standardOutput.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name + " ") }
    }

    let partitions: Int
    /// Replicas per partition: 1 (each worker host holds a third) or 3 (every host holds every
    /// partition, leaders elected in the cluster's etcd on e1-e3).
    let replicas: Int
    private let directory: TemporaryDirectory
    /// The script's state directory: keys, data, logs.
    let state: String
    /// What `env` printed: the brokers, key paths and each worker host's partitions.
    let environment: [String: String]

    /// Brings a cluster up and waits until every partition is served through both brokers (and
    /// m1's Prometheus, scraping and evaluating every `scrapeIntervalSeconds`, answers). With
    /// `replicas` 3, `leaseSeconds` is the leaders' etcd lease (`--lease-ttl`). The workers'
    /// journals have `durability`; with `powerLossFilesystem`, each worker host's data directory
    /// is on a power-loss filesystem of its own (`--power-loss-fs`: `power-cut` drops what it had
    /// not synced).
    /// - Throws: `ClusterError` with the script's output when it could not (nothing is left behind).
    init(partitions: Int, replicas: Int = 1, leaseSeconds: Int = 5, heartbeatMilliseconds: Int = 1000, scrapeIntervalSeconds: Int = 15,
         durability: String = "always", powerLossFilesystem: Bool = false) throws {
        self.partitions = partitions
        self.replicas = replicas
        directory = try TemporaryDirectory()
        state = directory.path + "/cluster"
        // A prefix and subnet of this process's own: namespaces are global to the machine.
        let tag = String(UInt32.random(in: 0..<0xFFFFFF), radix: 36)
        let subnet = "10.\(Int.random(in: 100...199)).\(Int.random(in: 0...255))"
        let up = try Self.script(["up", "--state", state, "--prefix", "lct\(tag)-", "--subnet", subnet, "--partitions", String(partitions),
                                  "--replicas", String(replicas), "--lease-ttl", String(leaseSeconds),
                                  "--heartbeat", String(heartbeatMilliseconds), "--timeout", "120",
                                  "--scrape-interval", String(scrapeIntervalSeconds), "--durability", durability]
                                  + (powerLossFilesystem ? ["--power-loss-fs"] : []), timeout: .seconds(180))
        guard up.succeeded else {
            // up tore down what it made; the state holds its logs, which the error shows.
            Self.tearDown(state: state, directory: directory)
            throw ClusterError(what: "netns-cluster.sh up", result: up)
        }
        let printed = try Self.script(["env", "--state", state], timeout: .seconds(10))
        var environment: [String: String] = [:]
        // `export NAME='VALUE'` lines; the values (paths, endpoints, ranges) hold no quote.
        for line in printed.standardOutput.split(separator: "\n") where line.hasPrefix("export ") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[line.index(line.startIndex, offsetBy: 7)..<equals])] = String(line[line.index(after: equals)...]).trimmingCharacters(in: ["'"])
        }
        self.environment = environment
    }

    /// Stops every process and removes the namespaces and the state. Safe to call twice.
    func down() { Self.tearDown(state: state, directory: directory) }

    private static func tearDown(state: String, directory: TemporaryDirectory) {
        do {
            let result = try script(["down", "--state", state], timeout: .seconds(120))
            if !result.succeeded { print("netns-cluster.sh down: \(result)") }
        } catch {
            print("netns-cluster.sh down could not run: \(error)")
        }
        directory.remove()
    }

    /// Runs a verb of the script on this cluster (`kill w1`, `link w2 down`, `start w1`, …).
    @discardableResult
    /// `environment` is added to the script's (`exec` passes it on to the command).
    func run(_ verb: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(150)) throws -> CommandResult {
        try Self.script([verb, "--state", state] + arguments, environment: environment, timeout: timeout)
    }

    /// Runs `arguments` on the client host c1.
    func onClient(_ arguments: [String], timeout: Duration) throws -> CommandResult {
        try run("exec", ["c1"] + arguments, timeout: timeout)
    }

    /// Runs `arguments` on `host` as an operator would after `eval "$(netns-cluster.sh env)"`:
    /// with the `LYCEUM_…` variables `env` printed (both brokers, the admin key, the broker's key).
    func asOperator(on host: String, _ arguments: [String], timeout: Duration) throws -> CommandResult {
        try run("exec", [host] + arguments, environment: operatorEnvironment, timeout: timeout)
    }

    /// The `LYCEUM_…` variables `env` printed: both brokers, the admin key, the broker's key.
    var operatorEnvironment: [String: String] { environment.filter { $0.key.hasPrefix("LYCEUM_") } }

    /// Starts `arguments` on `host` as ``asOperator(on:_:timeout:)`` does, without waiting for it.
    func startAsOperator(on host: String, _ arguments: [String]) throws -> Command {
        try Command(Self.script, ["exec", "--state", state, host] + arguments,
                    environment: operatorEnvironment.merging(["LYCEUM": LyceumProcess.executable.path]) { $1 })
    }

    /// The brokers' endpoints, in the order clients try them.
    var brokers: [String] { (environment["LYCEUM_BROKER"] ?? "").split(separator: ",").map(String.init) }

    /// The lyceum flags of an `app` key (`app`) or the admin key (`admin`) on c1.
    func curveFlags(_ key: String) -> [String] {
        ["--curve-secret-key", "\(state)/c1/keys/\(key)_secret", "--curve-server-key", "\(state)/c1/keys/broker"]
    }

    /// Runs the ledger client (Clients/ledger.py) on `host` (default c1) with an app key against
    /// `brokers`, and returns the JSON object it printed.
    func ledger<Report: Decodable>(_ command: String, _ arguments: [String], brokers: [String]? = nil, on host: String = "c1", timeout: Duration) throws -> Report {
        let result = try run("exec", [host, "/usr/bin/env", "PYTHONPATH=\(Self.pythonClient)", "/usr/bin/python3", Self.ledgerScript, command,
                                   "--brokers", (brokers ?? self.brokers).joined(separator: ","),
                                   "--key", "\(state)/c1/keys/app_secret", "--server-key", "\(state)/c1/keys/broker"] + arguments,
                             timeout: timeout)
        guard result.succeeded, let report = try? JSONDecoder().decode(Report.self, from: Data(result.standardOutput.utf8)) else {
            throw ClusterError(what: "ledger.py \(command)", result: result)
        }
        return report
    }

    /// Starts `ledger.py write` for `learners` on a thread: creates for `seconds` (or until the
    /// file `until` exists), each retried `attempts` times `timeout` seconds apart, every
    /// acknowledged one appended to `ledger`. The titles and request ids are named after the
    /// ledger's file, so two loads of one cluster never share a `request_id`.
    func startWriting(to ledger: String, learners: [String], seconds: Int, timeout: Int = 1, attempts: Int = 5, until: String? = nil) -> ThreadResult<WriteReport> {
        let run = URL(fileURLWithPath: ledger).deletingPathExtension().lastPathComponent
        return ThreadResult("ledger") { [self] in
            try self.ledger("write", ["--out", ledger, "--run", run, "--learners", learners.joined(separator: ","), "--seconds", String(seconds),
                                      "--timeout", String(timeout), "--attempts", String(attempts)] + (until.map { ["--until", $0] } ?? []),
                            timeout: .seconds(seconds + 60))
        }
    }

    /// Reads every book of `ledger` back through `brokers` (default: all) with `ledger.py verify`.
    func verify(_ ledger: String, through brokers: [String]? = nil) throws -> VerifyReport {
        try self.ledger("verify", ["--ledger", ledger], brokers: brokers, timeout: .seconds(60))
    }

    /// The partitions worker host `host` was given at creation.
    func partitions(of host: String) -> Set<Int> {
        var owned = Set<Int>()
        for piece in (environment["NETNS_OWNS_\(host)"] ?? "").split(separator: ",") {
            let bounds = piece.split(separator: "-").compactMap { Int($0) }
            if let first = bounds.first { owned.formUnion(first...(bounds.last ?? first)) }
        }
        return owned
    }

    /// `count` learner ids whose partitions are in `wanted` (from `ledger-<tag>-0` on).
    func learners(in wanted: Set<Int>, count: Int, tag: String) throws -> [String] {
        let scheme = try PartitionScheme(count: partitions)
        var found: [String] = []
        var index = 0
        while found.count < count {
            let learner = "\(tag)-\(index)"
            if wanted.contains(scheme.partition(ofLearner: learner)) { found.append(learner) }
            index += 1
        }
        return found
    }

    /// The last lines of every log of the cluster, for a failure's message.
    var logs: String {
        let hosts = (try? FileManager.default.contentsOfDirectory(atPath: state)) ?? []
        var text = ""
        for host in hosts.sorted() {
            let logDirectory = "\(state)/\(host)/logs"
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: logDirectory)) ?? []).sorted() {
                let lines = ((try? String(contentsOfFile: "\(logDirectory)/\(name)", encoding: .utf8)) ?? "").split(separator: "\n")
                text += "== \(host)/\(name)\n" + lines.suffix(15).joined(separator: "\n") + "\n"
            }
        }
        return text
    }

    private static func script(_ arguments: [String], environment: [String: String] = [:], timeout: Duration) throws -> CommandResult {
        try Command.run(script, arguments, environment: environment.merging(["LYCEUM": LyceumProcess.executable.path]) { $1 }, timeout: timeout)
    }
}

/// What `ledger.py write` printed: creates acknowledged, replies that were not the request's,
/// failures by error code, and the longest any create took (retries included), in seconds.
struct WriteReport: Decodable, Sendable {
    let acknowledged: Int
    let wrong: Int
    let errors: [String: Int]
    let longestWait: Double?

    enum CodingKeys: String, CodingKey {
        case acknowledged, wrong, errors, longestWait = "longest_wait"
    }
}

/// What `ledger.py verify` printed: acknowledged books looked for, not found, applied twice.
struct VerifyReport: Decodable, Sendable {
    let checked: Int
    let missing: Int
    let duplicates: Int
    /// Books read whose create was never sent (0 unless verify was given the unknown creates).
    let unexpected: Int
    let examples: [String]

    /// Whether every acknowledged book was there exactly once (and there were some).
    var isComplete: Bool { checked > 0 && missing == 0 && duplicates == 0 }
}

/// How `ledger.py probe` saw one learner's request answered.
struct ProbeAnswer: Decodable, Sendable {
    let ok: Bool
    let code: String?
    let seconds: Double
}

/// A step of a cluster test that did not succeed, with what the command printed.
struct ClusterError: Error, CustomStringConvertible {
    let what: String
    let result: CommandResult
    var description: String { "\(what) failed: \(result)" }
}
