import Configuration
import Foundation
import LyceumServer
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// The files in deploy/: the systemd units pass `systemd-analyze verify` and find the
/// configuration they name, and the local-cluster script runs a broker and worker processes that
/// keep serving when a worker is killed.
@Suite(.serialized)
struct DeployTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy").standardized

    static let systemdAnalyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: systemdAnalyze != nil, "systemd-analyze is not installed (Debian's systemd package)"))
    func systemdUnitsVerify() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // verify checks that ExecStart's binary exists: point it at the one just built.
        for unit in ["lyceum-broker.service", "lyceum-worker@.service", "lyceum-shard.service", "lyceum-shard@.service"] {
            let text = try Self.unit(unit)
            #expect(text.contains("ExecReload=/bin/kill -HUP $MAINPID"))
            #expect(text.contains("Restart=on-failure"))
            #expect(text.contains("User=lyceum"))
            #expect(text.contains("ProtectSystem=strict"))
            // Started once it says READY=1, restarted when its serving thread stops saying WATCHDOG=1.
            #expect(text.contains("Type=notify\n") && text.contains("WatchdogSec="), "\(unit)")
            let local = text.replacingOccurrences(of: "/usr/local/bin/lyceum", with: LyceumProcess.executable.path)
            try local.write(toFile: directory.path + "/" + unit, atomically: true, encoding: .utf8)
        }
        let worker = try String(contentsOfFile: directory.path + "/lyceum-worker@.service", encoding: .utf8)
        #expect(worker.contains("ReadWritePaths=/var/lib/lyceum"))
        try worker.write(toFile: directory.path + "/lyceum-worker@books.service", atomically: true, encoding: .utf8)
        let shard = try String(contentsOfFile: directory.path + "/lyceum-shard.service", encoding: .utf8)
        #expect(shard.contains("ReadWritePaths=/var/lib/lyceum"))
        #expect(shard.contains("EnvironmentFile=/etc/lyceum/shard.env"))
        // Each instance its own node, data directory and only writable path.
        let node = try String(contentsOfFile: directory.path + "/lyceum-shard@.service", encoding: .utf8)
        for line in ["StateDirectory=lyceum/%i", "ReadWritePaths=/var/lib/lyceum/%i", "EnvironmentFile=/etc/lyceum/shard.env", "EnvironmentFile=/etc/lyceum/shard-%i.env"] {
            #expect(node.split(separator: "\n").contains { $0 == line }, "lyceum-shard@.service lacks \(line)")
        }
        #expect(node.contains("--node %i --data /var/lib/lyceum/%i"))
        try node.write(toFile: directory.path + "/lyceum-shard@w1a.service", atomically: true, encoding: .utf8)
        for unit in ["lyceum-broker.service", "lyceum-worker@.service", "lyceum-worker@books.service", "lyceum-shard.service",
                     "lyceum-shard@.service", "lyceum-shard@w1a.service"] {
            let result = try ChildProcess.output(of: Self.systemdAnalyze!, ["verify", directory.path + "/" + unit])
            #expect(result.status == 0 && result.output.isEmpty, "\(unit): \(result.output)")
        }
    }

    /// Every file a unit must find under /etc/lyceum/ (its required `EnvironmentFile=`s, its
    /// `--config`) is one deploy/ ships, so an installation copying deploy/ starts every unit.
    @Test func everyFileAUnitNeedsIsShipped() throws {
        let units = ["lyceum-broker.service": "", "lyceum-worker@.service": "catalog", "lyceum-shard.service": "", "lyceum-shard@.service": "w1a"]
        for (unit, instance) in units {
            let needed = try Self.requiredFiles(of: unit, instance: instance)
            #expect(!needed.isEmpty, "\(unit) names no configuration")
            for file in needed {
                #expect(FileManager.default.fileExists(atPath: Self.shipped(file)), "\(unit) needs \(file), which deploy/ lacks")
            }
        }
        #expect(try Self.requiredFiles(of: "lyceum-shard@.service", instance: "w1a")
            == ["/etc/lyceum/shard-w1a.env", "/etc/lyceum/shard.env", "/etc/lyceum/worker.conf"])
    }

    /// lyceum-shard@w1a's process, configured as systemd starts it (its command line and
    /// environment files over worker.conf), is node w1a of the cluster's partitions with its own
    /// data directory, and its metrics port is neither lyceum-shard.service's nor unset, so the
    /// two can run on one host.
    @Test func aShardInstanceIsItsOwnNode() throws {
        let instance = try Self.settings(of: "lyceum-shard@.service", instance: "w1a")
        let single = try Self.settings(of: "lyceum-shard.service", instance: "")
        #expect(instance.node == "w1a")
        #expect(instance.dataDirectory == "/var/lib/lyceum/w1a" && single.dataDirectory == "/var/lib/lyceum")
        #expect(instance.services == ["books", "progress"] && instance.partitions == single.partitions)
        #expect(instance.metricsPort != 0 && instance.metricsPort != single.metricsPort)
    }

    @Test func theLocalClusterKeepsServingWhenAWorkerIsKilled() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let endpoint = try freeLoopbackEndpoint()
        let port = endpoint.split(separator: ":").last.map(String.init) ?? ""
        // The script gives the broker metrics on BASE and the workers BASE+1…BASE+3; events go
        // on BASE+4 and the forwarder's input on BASE+5.
        let metricsPort = try freeLoopbackPorts(count: 6)
        let eventsPort = metricsPort + 4
        // The script starts as from a shell (no signal blocked), so that SIGTERM reaches its trap.
        let cluster = try ChildProcess(
            Self.deploy.appendingPathComponent("local-cluster.sh").path,
            ["--lyceum", LyceumProcess.executable.path, "--workers", "2", "--port", port, "--data", data.path,
             "--metrics-port", String(metricsPort), "--events-port", String(eventsPort)])
        var pids: [String: Int32] = [:]
        defer {
            cluster.signal(SIGTERM)
            // Whatever the script could not stop (it was killed, or failed) is stopped here.
            for pid in pids.values where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
        try #require(cluster.waitForLine("cluster ready") != nil, "local-cluster.sh: \(cluster.standardOutput)")
        for line in cluster.lines where line.hasPrefix("started ") {
            let words = line.split(separator: " ")
            pids[String(words[1])] = Int32(words[3])
        }
        try #require(pids.count == 4, "\(cluster.standardOutput)")

        try waitUntilServing(["catalog", "books", "progress"], at: endpoint) { "logs:\n\(Self.logs(in: data.path + "/logs"))" }
        #expect(try Self.awaitCatalogWorkers(32, metricsPort: metricsPort), "two processes of 16 catalog sessions each")

        // Retries ride over the request a killed worker had in hand.
        let load = Load(endpoint: endpoint, clients: 4, configuration: ClientConfiguration(timeout: .seconds(1), attempts: 3)) { client, sequence in
            client == 0
                ? ("books", #"{"op":"create","learner":"cluster","title":"T\#(sequence)","author":"A","genre":"Fantasy","rating":4}"#)
                : ("catalog", #"{"op":"list_categories"}"#)
        }
        load.run(for: .milliseconds(700))
        #expect(kill(pids["catalog-worker-1"]!, SIGKILL) == 0)
        load.run(for: .milliseconds(1500))
        let outcomes = try load.stop()
        #expect(outcomes.count > 20)
        #expect(outcomes.allSatisfy { $0.reply != nil }, "\(outcomes.filter { $0.reply == nil }.count) requests failed after retries")
        #expect(try outcomes.compactMap { try $0.parsed() }.allSatisfy { $0.isOK })

        #expect(cluster.signal(SIGTERM) != nil, "local-cluster.sh did not stop on SIGTERM")
        _ = eventually { cluster.standardOutput.contains("cluster stopped") }
        #expect(cluster.standardOutput.contains("cluster stopped"))
        #expect(pids.values.allSatisfy { kill($0, 0) != 0 }, "local-cluster.sh left a process running")
        let brokerLog = try String(contentsOfFile: data.path + "/logs/broker.log", encoding: .utf8)
        #expect(brokerLog.contains("broker stopped"))
    }

    /// The text of `deploy/systemd/<name>`.
    static func unit(_ name: String) throws -> String {
        try String(contentsOf: deploy.appendingPathComponent("systemd/" + name), encoding: .utf8)
    }

    /// The value of `key` of `unit`'s lines `key=value`, each with `%i` as `instance`.
    static func directives(_ key: String, of unit: String, instance: String) throws -> [String] {
        try Self.unit(unit).split(separator: "\n").compactMap { line in
            line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)).replacingOccurrences(of: "%i", with: instance) : nil
        }
    }

    /// The files under /etc/lyceum/ `unit` cannot start without, sorted: its `EnvironmentFile=`s
    /// without systemd's `-` (optional) mark, and the files its `ExecStart=` names.
    static func requiredFiles(of unit: String, instance: String) throws -> [String] {
        let environment = try directives("EnvironmentFile", of: unit, instance: instance).filter { !$0.hasPrefix("-") }
        let arguments = try directives("ExecStart", of: unit, instance: instance).flatMap { $0.split(separator: " ").map(String.init) }
        return (environment + arguments.filter { $0.hasPrefix("/etc/lyceum/") }).sorted()
    }

    /// Where deploy/ ships the file installed as `path` under /etc/lyceum/.
    static func shipped(_ path: String) -> String {
        deploy.appendingPathComponent(String(path.dropFirst("/etc/lyceum/".count))).path
    }

    /// The settings of the process `unit` starts as `instance`: its `ExecStart=` arguments after
    /// the command, over the variables of its required environment files (a later file's win),
    /// over its `--config` file; deploy/'s files stand for /etc/lyceum/'s.
    static func settings(of unit: String, instance: String) throws -> Settings {
        var environment: [String: String] = [:]
        for file in try directives("EnvironmentFile", of: unit, instance: instance) where !file.hasPrefix("-") {
            environment.merge(try variables(in: shipped(file))) { $1 }
        }
        let command = try #require(directives("ExecStart", of: unit, instance: instance).first).split(separator: " ").map(String.init)
        return try ConfigurationTests.resolve(command.dropFirst(2).map { $0.hasPrefix("/etc/lyceum/") ? shipped($0) : $0 }, environment)
    }

    /// The variables an environment file such as shard.env sets: its `NAME=value` lines.
    static func variables(in file: String) throws -> [String: String] {
        var variables: [String: String] = [:]
        for line in try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return variables
    }

    /// Waits until the broker's metrics count `expected` catalog workers.
    static func awaitCatalogWorkers(_ expected: Double, metricsPort: Int) throws -> Bool {
        try eventually {
            try Metrics.scrape(port: metricsPort).value("lyceum_broker_workers", ["service": "catalog"]) == expected
        }
    }

    /// Every log file in `directory`, each under its name, for a failure message.
    static func logs(in directory: String) -> String {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { name in
                "== \(name)\n" + (try String(contentsOfFile: directory + "/" + name, encoding: .utf8))
            }.joined(separator: "\n")
        } catch {
            return "cannot read the logs in \(directory): \(error)"
        }
    }
}
