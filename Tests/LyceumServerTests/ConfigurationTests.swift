import Configuration
import Foundation
import LyceumTestSupport
import LyceumServer
import Testing

/// Configuration sources: one precedence, both file formats, and an error naming the key and
/// the source for every kind of bad input.
struct ConfigurationTests {
    static let allKeys = Set(SettingKey.allCases)

    /// Writes `text` to a fresh file in `directory` and returns its path.
    static func file(in directory: TemporaryDirectory, _ text: String, suffix: String = ".conf") throws -> String {
        let path = directory.path + "/" + UUID().uuidString + suffix
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func resolve(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Settings {
        try ConfigurationSources(arguments: arguments, environment: environment, accepting: allKeys).resolve().settings
    }

    @Test func flagsBeatEnvironmentBeatsFileBeatsDefaults() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let path = try Self.file(in: files, """
            # a comment, then settings
            sessions = 6
            timeout = 700
            log-level = warning   # trailing comment
            endpoint = tcp://127.0.0.1:7001
            endpoint = tcp://127.0.0.1:7002
            """)
        let settings = try Self.resolve(
            ["--config", path, "--sessions", "8"],
            ["LYCEUM_SESSIONS": "7", "LYCEUM_TIMEOUT": "900"])
        #expect(settings.sessionsPerService == 8)
        #expect(settings.origins[.sessions] == .commandLine)
        #expect(settings.timeout == .milliseconds(900))
        #expect(settings.origins[.timeout] == .environment(variable: "LYCEUM_TIMEOUT"))
        #expect(settings.logLevel == .warning)
        #expect(settings.origins[.logLevel] == .file(path: path, line: 4))
        #expect(settings.endpoints == ["tcp://127.0.0.1:7001", "tcp://127.0.0.1:7002"])
        #expect(settings.queueLimit == 1000)
        #expect(settings.origins[.queueLimit] == nil)
    }

    @Test func aRepeatableSettingFromAHigherSourceReplacesTheLowerOnesList() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let path = try Self.file(in: files, #"{"endpoint": ["tcp://127.0.0.1:1", "tcp://127.0.0.1:2"], "sessions": 5, "log-format": "json"}"#, suffix: ".json")
        let fromFile = try Self.resolve([], ["LYCEUM_CONFIG": path])
        #expect(fromFile.endpoints == ["tcp://127.0.0.1:1", "tcp://127.0.0.1:2"])
        #expect(fromFile.sessionsPerService == 5)
        #expect(fromFile.logFormat == .json)
        #expect(fromFile.origins[.sessions] == .file(path: path, line: nil))
        let fromEnvironment = try Self.resolve(["--config", path], ["LYCEUM_ENDPOINT": "tcp://127.0.0.1:3,ipc:///tmp/x"])
        #expect(fromEnvironment.endpoints == ["tcp://127.0.0.1:3", "ipc:///tmp/x"])
        let fromFlags = try Self.resolve(["--config", path, "--endpoint", "tcp://127.0.0.1:4"], ["LYCEUM_ENDPOINT": "tcp://127.0.0.1:3"])
        #expect(fromFlags.endpoints == ["tcp://127.0.0.1:4"])
    }

    @Test func brokersAndForwardersAreListsFromEverySource() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let path = try Self.file(in: files, "broker = tcp://10.0.0.1:5555\nbroker = tcp://10.0.0.2:5555\nforwarder-endpoint = tcp://10.0.0.1:5558")
        let fromFile = try Self.resolve(["--config", path])
        #expect(fromFile.brokers == ["tcp://10.0.0.1:5555", "tcp://10.0.0.2:5555"])
        #expect(fromFile.forwarderEndpoints == ["tcp://10.0.0.1:5558"])
        let fromEnvironment = try Self.resolve(["--config", path], ["LYCEUM_FORWARDER_ENDPOINT": "tcp://10.0.0.1:5558,tcp://10.0.0.2:5558"])
        #expect(fromEnvironment.forwarderEndpoints == ["tcp://10.0.0.1:5558", "tcp://10.0.0.2:5558"])
        let fromFlags = try Self.resolve(["--config", path, "--broker", "tcp://10.0.0.3:5555", "--broker", "tcp://10.0.0.4:5555"])
        #expect(fromFlags.brokers == ["tcp://10.0.0.3:5555", "tcp://10.0.0.4:5555"])
        #expect(Settings().brokers == ["tcp://127.0.0.1:5555"])
    }

    @Test func theConfigFlagBeatsTheConfigVariable() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let flagged = try Self.file(in: files, "sessions = 2")
        let variable = try Self.file(in: files, "sessions = 3")
        #expect(try Self.resolve(["--config=\(flagged)"], ["LYCEUM_CONFIG": variable]).sessionsPerService == 2)
    }

    @Test(arguments: [
        // (file contents or nil, environment, flags, expected error description)
        ("colour = red", [:], [], "file {FILE}:1: unknown setting 'colour'"),
        ("sessions", [:], [], "file {FILE}:1: expected 'key = value', got 'sessions'"),
        ("sessions = many", [:], [], "sessions (file {FILE}:1): expected an integer from 1 to 64, got 'many'"),
        ("\n\nlog-format = xml", [:], [], "log-format (file {FILE}:3): expected auto, human, logfmt, json, got 'xml'"),
        (#"{"sessions": [1, 2]}"#, [:], [], "sessions (file {FILE}): takes one value, not a list"),
        (#"{"sessions": true}"#, [:], [], "sessions (file {FILE}): expected a string or an integer, got a boolean"),
        (#"{"sessions": 2"#, [:], [], "file {FILE}: not valid JSON"),
        (#"["sessions"]"#, [:], [], "file {FILE}: expected a JSON object of settings"),
        (nil, ["LYCEUM_COLOUR": "red"], [], "LYCEUM_COLOUR (environment): unknown setting"),
        (nil, ["LYCEUM_METRICS_PORT": "70000"], [], "LYCEUM_METRICS_PORT (environment): expected a TCP port from 0 to 65535, got '70000'"),
        (nil, ["LYCEUM_DURABILITY": "sometimes"], [], "LYCEUM_DURABILITY (environment): expected always, none, interval"),
        (nil, [:], ["--heartbeat-liveness", "0"], "--heartbeat-liveness: expected an integer from 1 to 1000, got '0'"),
        (nil, [:], ["--max-input-bytes", "1000"], "--max-input-bytes: expected bytes from 65536 to 1073741824, got '1000'"),
        (nil, ["LYCEUM_MAX_CONNECTIONS": "0"], [], "LYCEUM_MAX_CONNECTIONS (environment): expected an integer from 1 to 1000000, got '0'"),
        (nil, [:], ["--max-batch-ms", "0"], "--max-batch-ms: expected milliseconds from 1 to 1000, got '0'"),
        (nil, [:], ["--config"], "--config: needs a value"),
        (nil, [:], ["--config", "/nonexistent/lyceum.conf"], "file /nonexistent/lyceum.conf: cannot read the configuration file"),
        (nil, [:], ["--queue-limit", "20", "--queue-limit-total", "10"], "--queue-limit: 20 exceeds queue-limit-total 10"),
        (nil, ["LYCEUM_RECONNECT_INITIAL": "5000"], ["--reconnect-max", "100"], "LYCEUM_RECONNECT_INITIAL (environment): 5000 ms exceeds reconnect-max 100 ms"),
        ("metrics-port = 7000", [:], ["--endpoint", "tcp://127.0.0.1:7000"], "metrics-port (file {FILE}:1): port 7000 is also the broker endpoint tcp://127.0.0.1:7000"),
        (nil, [:], ["--replicas", "0"], "--replicas: expected an integer from 1 to 7, got '0'"),
        (nil, [:], ["--etcd-endpoint", "https://10.0.0.1:2379"], "--etcd-endpoint: expected an etcd member's client URL such as http://127.0.0.1:2379"),
        (nil, [:], ["--replication-endpoint", "ipc:///tmp/r"], "--replication-endpoint: expected an endpoint such as tcp://10.0.0.11:5570, got 'ipc:///tmp/r'"),
        (nil, [:], ["--lease-ttl", "1"], "--lease-ttl: expected seconds from 2 to 3600, got '1'"),
        ("lease-ttl = 4", [:], ["--lease-retry", "2000"], "--lease-retry: lease-keep-alive 1000 ms + 2 × lease-retry 2000 ms exceeds lease-ttl 4 s"),
        ("lease-ttl = 4", [:], [], "lease-ttl (file {FILE}:1): lease-keep-alive 1000 ms + 2 × lease-retry 2000 ms exceeds lease-ttl 4 s"),
        (nil, ["LYCEUM_REPLICAS": "3"], ["--partitions", "8"], "LYCEUM_REPLICAS (environment): 3 replicas need etcd for their leaderships: give etcd-endpoint"),
        (nil, [:], ["--replicas", "3", "--etcd-endpoint", "http://127.0.0.1:2379", "--partitions", "8"], "--replicas: 3 replicas need replication-endpoint"),
        (nil, [:], ["--replicas", "3", "--etcd-endpoint", "http://127.0.0.1:2379", "--replication-endpoint", "tcp://127.0.0.1:5570"], "--replicas: 3 replicas are replicas of partitions, and partitions is 0"),
    ] as [(String?, [String: String], [String], String)])
    func everyBadInputIsAnErrorNamingTheKeyAndTheSource(file: String?, environment: [String: String], flags: [String], expected: String) throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let path = try file.map { try Self.file(in: files, $0) }
        let arguments = (path.map { ["--config", $0] } ?? []) + flags
        let expectation = expected.replacingOccurrences(of: "{FILE}", with: path ?? "")
        #expect {
            try Self.resolve(arguments, environment)
        } throws: { error in
            "\(error)".hasPrefix(expectation) || { print("got: \(error)\nexpected: \(expectation)"); return false }()
        }
    }

    @Test func theExampleDeploymentFilesLoad() throws {
        let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy").standardized.path
        let broker = try Self.resolve(["--config", deploy + "/broker.conf"])
        #expect(broker.endpoints == ["tcp://0.0.0.0:5555"])
        #expect(broker.metricsPort == 9464)
        #expect(broker.logFormat == .logfmt)
        #expect(broker.partitions == 64)
        let worker = try Self.resolve(["--config", deploy + "/worker.conf"])
        #expect(worker.brokers == ["tcp://b1.internal:5555", "tcp://b2.internal:5555"])
        #expect(worker.forwarderEndpoints == ["tcp://b1.internal:5558", "tcp://b2.internal:5558"])
        #expect(worker.dataDirectory == "/var/lib/lyceum")
        #expect(worker.sessionsPerService == 8)
        #expect(worker.reconnectMaximum == .seconds(32))
        // Every setting the example files leave out keeps its default, and says so.
        #expect(worker.origins[.metricsPort] == nil)
    }

    /// lyceum-shard.service: worker.conf, then shard.env's variables, then the unit's flags make a
    /// partitioned worker of the cluster's count, with sessions that fit its budget.
    @Test func theShardUnitsEnvironmentFileMakesAPartitionedWorker() throws {
        let shard = try DeployTests.settings(of: "lyceum-shard.service", instance: "")
        let broker = try Self.resolve(["--config", DeployTests.deploy.path + "/broker.conf"])
        #expect(shard.partitions == broker.partitions)
        #expect(shard.services == ["books", "progress"])
        #expect(shard.sessionsPerService == 4)
        #expect(shard.metricsPort == 9465)
    }

    @Test func lyceumConfigPrintsEveryValueWithItsSourceInTheFormatItReads() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let path = try Self.file(in: files, "sessions = 6\nhwm = 50")
        let result = try LyceumProcess.run(["config", "--config", path, "--log-level", "debug"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("sessions ") && $0.contains("= 6") && $0.hasSuffix("# file \(path):1") })
        #expect(lines.contains { $0.hasPrefix("log-level ") && $0.contains("= debug") && $0.hasSuffix("# command line") })
        #expect(lines.contains { $0.hasPrefix("queue-limit ") && $0.contains("= 1000") && $0.hasSuffix("# default") })
        // Settings without a default value (catalog, the CURVE keys) are listed as comments.
        for key in SettingKey.allCases where !Settings().values(of: key).isEmpty {
            #expect(lines.contains { $0.hasPrefix(key.rawValue + " ") }, "\(key) missing from lyceum config")
        }
        // The listing is itself a configuration file giving the same settings.
        let listing = try Self.file(in: files, result.stdout)
        let reread = try Self.resolve(["--config", listing])
        #expect(reread.sessionsPerService == 6 && reread.highWaterMark == 50 && reread.logLevel == .debug)
    }

    @Test func lyceumConfigSaysTheDashboardTokenIsSetWithoutPrintingIt() throws {
        let token = "a-token-nobody-should-see-printed"
        let result = try LyceumProcess.run(["config", "--dashboard-token", token])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains(token))
        #expect(result.stdout.split(separator: "\n").contains { $0.hasPrefix("# dashboard-token") && $0.contains("(set, not shown)") })
    }

    @Test func theReplicationSettingsResolveFromEverySourceAndDefaultToOneReplica() throws {
        #expect(try Self.resolve([]).replicas == 1)
        #expect(try Self.resolve([]).etcdEndpoints.isEmpty)
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let path = try Self.file(in: files, "etcd-endpoint = http://10.0.0.1:2379\nlease-ttl = 10")
        let settings = try Self.resolve(
            ["--config", path, "--etcd-endpoint", "http://10.0.0.2:2379", "--etcd-endpoint", "http://10.0.0.3:2379", "--lease-retry", "3000"],
            ["LYCEUM_REPLICAS": "3", "LYCEUM_PARTITIONS": "8", "LYCEUM_REPLICATION_ENDPOINT": "tcp://10.0.0.11:5570"])
        #expect(settings.replicas == 3)
        #expect(settings.etcdEndpoints == ["http://10.0.0.2:2379", "http://10.0.0.3:2379"])
        #expect(settings.replicationEndpoint == "tcp://10.0.0.11:5570")
        let timing = try settings.leaseTiming
        #expect(timing.ttlSeconds == 10 && timing.keepAlivePeriod == .seconds(1) && timing.retry == .seconds(3))
    }

    @Test func aWorkerRefusesBrokenLeaseTimingsWithStatus2NamingThem() throws {
        let result = try LyceumProcess.run(["worker", "--broker", "tcp://127.0.0.1:1", "--lease-ttl", "3", "--lease-keep-alive", "2000"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("lease-keep-alive 2000 ms + 2 × lease-retry 2000 ms exceeds lease-ttl 3 s"), "\(result.stderr)")
    }

    @Test func aWorkerRefusesReplicasWithoutEtcdWithStatus2() throws {
        let result = try LyceumProcess.run(["worker", "--broker", "tcp://127.0.0.1:1", "--partitions", "4", "--replicas", "3"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--replicas: 3 replicas need etcd"), "\(result.stderr)")
    }

    @Test func aWorkerRefusesAPlaintextReplicationChannelOffLoopbackWithoutInsecure() throws {
        let result = try LyceumProcess.run([
            "worker", "--broker", "tcp://127.0.0.1:1", "--partitions", "4", "--replicas", "3", "--etcd-endpoint", "http://127.0.0.1:1",
            "--replication-endpoint", "tcp://10.0.0.11:5570",
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("tcp://10.0.0.11:5570 is not loopback, and the replication channel is plaintext"), "\(result.stderr)")
    }

    @Test func aCurveWorkerWithReplicasNeedsAuthorizedKeysWithStatus2() throws {
        let result = try LyceumProcess.run([
            "worker", "--broker", "tcp://127.0.0.1:1", "--partitions", "4", "--replicas", "3", "--etcd-endpoint", "http://127.0.0.1:1",
            "--replication-endpoint", "tcp://10.0.0.11:5570", "--curve-secret-key", "/nonexistent/w1_secret", "--curve-server-key", "/nonexistent/broker",
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--authorized-keys: required with replicas above 1 and curve-secret-key"), "\(result.stderr)")
    }

    @Test func aBadSettingStopsTheStartWithStatus2NamingKeyAndSource() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let path = try Self.file(in: files, "sessions = 4\ncolour = red")
        let result = try LyceumProcess.run(["serve", "--config", path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("file \(path):2: unknown setting 'colour'"))
    }
}
