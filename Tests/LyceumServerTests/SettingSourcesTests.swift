import Configuration
import Foundation
import LyceumTestSupport
import Testing

/// Issue 28: a command whose `--help` says a setting is "also LYCEUM_…" takes it from the
/// environment and from a `--config` file, not only from its flags. The test walks the real
/// program's commands through their `--help` (so a command added later is walked too), sets
/// every setting a command declares only in the environment, then only in a file, and reads
/// what reached the command from its `--print-settings` dry run.
struct SettingSourcesTests {
    /// One command as its `--help` declares it.
    struct Declared: CustomStringConvertible {
        /// Its words after `lyceum`, e.g. `["partitions", "move"]`.
        let path: [String]
        /// The settings its options say are also `LYCEUM_…` variables.
        let settings: [SettingKey]
        /// Values for its required options and positionals, so that the parser lets it run.
        let required: [String]

        var description: String { "lyceum " + path.joined(separator: " ") }
    }

    @Test func everySettingAnOptionDeclaresReachesTheCommandFromTheEnvironment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let samples = try Samples(directory: directory.path)
        for command in try Self.commands() where !command.settings.isEmpty {
            for settings in Self.compatibleGroups(command.settings) {
                let environment = settings.map { "\($0.environmentVariable)=\(samples.value($0))" }
                let printed = try Self.printSettings(command, launcher: ["/usr/bin/env"] + environment)
                for key in settings {
                    #expect(Self.shows(printed, key, samples.value(key), from: "environment \(key.environmentVariable)"),
                            "\(command): \(key.environmentVariable) did not reach it:\n\(printed)")
                }
            }
        }
    }

    @Test func everySettingAnOptionDeclaresReachesTheCommandFromAConfigFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let samples = try Samples(directory: directory.path)
        for command in try Self.commands() where !command.settings.isEmpty {
            for (index, settings) in Self.compatibleGroups(command.settings).enumerated() {
                let file = directory.path + "/" + command.path.joined(separator: "-") + "-\(index).conf"
                try settings.map { "\($0.rawValue) = \(samples.value($0))" }.joined(separator: "\n")
                    .write(toFile: file, atomically: true, encoding: .utf8)
                let printed = try Self.printSettings(command, arguments: ["--config", file])
                for key in settings {
                    #expect(Self.shows(printed, key, samples.value(key), from: "file \(file):"),
                            "\(command): \(key.rawValue) in --config did not reach it:\n\(printed)")
                }
            }
        }
    }

    /// Settings that exclude each other (two ways to give one value): each is given in a run of its own.
    static let exclusive: [SettingKey] = [.metricsTokenFile]

    /// `settings` in groups that can be given together: all but the ``exclusive`` ones, then each of those alone.
    static func compatibleGroups(_ settings: [SettingKey]) -> [[SettingKey]] {
        [settings.filter { !exclusive.contains($0) }] + settings.filter(exclusive.contains).map { [$0] }
    }

    /// The sample values, with the files some of them name made in a directory of the test's.
    struct Samples {
        let tokenFile: String

        /// Writes the sample token file (mode 0600) into `directory`.
        init(directory: String) throws {
            tokenFile = directory + "/metrics-token"
            try "sample-file-token-0123456789\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            chmod(tokenFile, 0o600)
        }

        func value(_ key: SettingKey) -> String {
            key == .metricsTokenFile ? tokenFile : SettingSourcesTests.sample(key)
        }
    }

    /// The walk reaches the commands that call the brokers, among them those that once read
    /// their flags alone (`partitions move`, `rebalance`) or took no `--broker` (`bench`).
    @Test func theWalkFindsTheClientCommandsThatOnceReadTheirFlagsAlone() throws {
        let paths = try Self.commands().filter { $0.settings.contains(.broker) }.map(\.path)
        for path in [["partitions", "move"], ["partitions", "rebalance"], ["bench"], ["watch"], ["call"], ["status"]] {
            #expect(paths.contains(path), "\(path) declares no LYCEUM_BROKER")
        }
    }

    /// `lyceum PATH REQUIRED… ARGUMENTS… --print-settings`, run to completion: its stdout.
    private static func printSettings(_ command: Declared, launcher: [String] = [], arguments: [String] = []) throws -> String {
        let process = try LyceumProcess(command.path + command.required + arguments + ["--print-settings"], launcher: launcher)
        let status = process.waitForExit()
        #expect(status == 0, "\(command) --print-settings: \(process.standardError)")
        return process.standardOutput
    }

    /// Whether `printed` (the `lyceum config` format) gives `key` its sample `value` from `origin`.
    private static func shows(_ printed: String, _ key: SettingKey, _ value: String, from origin: String) -> Bool {
        printed.split(separator: "\n").contains { line in
            let setting = line.hasPrefix("# ") ? line.dropFirst(2) : line[...]
            guard setting.hasPrefix(key.rawValue + " "), line.contains("   # \(origin)") else { return false }
            // A secret is only said to be set.
            return key == .dashboardToken || key == .metricsToken ? line.contains("(set, not shown)") : line.contains("= \(value)   #")
        }
    }

    /// Every command of `lyceum --help` and, below a group, of its `--help`, with what it declares.
    static func commands() throws -> [Declared] {
        var found: [Declared] = []
        var paths = try subcommands(of: [])
        while let path = paths.first {
            paths.removeFirst()
            let help = try LyceumProcess.run(path + ["--help"]).stdout
            paths += try subcommands(of: path)
            guard let options = section("options", of: help) else { continue }
            found.append(Declared(path: path, settings: try settings(in: options), required: required(in: help, options: options)))
        }
        return found
    }

    /// The commands `--help` of `path` lists.
    private static func subcommands(of path: [String]) throws -> [[String]] {
        let help = try LyceumProcess.run(path + ["--help"]).stdout
        return (section("commands", of: help) ?? []).compactMap { line in
            line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map { path + [String($0)] } : nil
        }
    }

    /// The lines of the section `name:` of a help text, up to the blank line after it.
    private static func section(_ name: String, of help: String) -> [String]? {
        let lines = help.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: name + ":") else { return nil }
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }

    /// The settings of the options whose help says `also LYCEUM_NAME` (a configuration file's
    /// `LYCEUM_CONFIG` is not one).
    private static func settings(in options: [String]) throws -> [SettingKey] {
        try options.compactMap { line -> SettingKey? in
            guard let range = line.range(of: #"also LYCEUM_[A-Z_]+"#, options: .regularExpression) else { return nil }
            let variable = String(line[range].dropFirst("also ".count))
            guard variable != "LYCEUM_CONFIG" else { return nil }
            return try #require(SettingKey.allCases.first { $0.environmentVariable == variable }, "\(variable) names no setting")
        }
    }

    /// A value for each required option and positional argument of the usage line.
    private static func required(in help: String, options: [String]) -> [String] {
        var words: [String] = []
        var flag: String?
        for line in options {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("--") { flag = trimmed.split(separator: " ").first.map(String.init) }
            if line.contains("(required"), let flag { words += [flag, "w2"] }
        }
        let usage = help.components(separatedBy: "\n").first ?? ""
        let positionals = usage.components(separatedBy: "[options]").dropFirst().first?.split(separator: " ") ?? []
        return words + positionals.filter { !$0.hasPrefix("[") }.map { _ in "1" }
    }

    /// A value of each setting, by name, that is valid, not the default, and works beside every other sample.
    static let samples: [String: String] = [
        "endpoint": "tcp://127.0.0.1:6101",
        "broker": "tcp://127.0.0.1:6102",
        "data": "/tmp/lyceum-sample-data",
        "catalog": "/tmp/lyceum-sample-catalog.json",
        "service": "books",
        "sessions": "7",
        "durability": "none",
        "timeout": "1234",
        "log-level": "debug",
        "log-format": "json",
        "metrics-port": "6103",
        "heartbeat-interval": "1500",
        "heartbeat-liveness": "4",
        "mdp": "18",
        "reconnect-initial": "500",
        "reconnect-max": "9000",
        "queue-limit": "900",
        "queue-limit-total": "9000",
        "hwm": "900",
        "receive-hwm": "90",
        "events-endpoint": "tcp://127.0.0.1:6104",
        "snapshot-endpoint": "tcp://127.0.0.1:6105",
        "forwarder-endpoint": "tcp://127.0.0.1:6106",
        "log-rate-limit": "7",
        "metrics-connections": "9",
        "metrics-timeout": "1500",
        "metrics-address": "127.0.0.3",
        "metrics-token": "sample-metrics-token-0123456789",
        "metrics-token-file": "(made by Samples)",
        "snapshot-page-bytes": "65536",
        "max-reply-bytes": "131072",
        "max-books-per-learner": "25000",
        "max-library-bytes": "1048576",
        "max-batch-ms": "3",
        "unknown-service-timeout": "1500",
        "backup-idle-limit": "30000",
        "max-connections": "900",
        "max-input-bytes": "1048576",
        "max-output-bytes": "1048576",
        "dashboard-port": "6107",
        "dashboard-address": "127.0.0.2",
        "dashboard-token": "sample-token-0123456789",
        "curve-secret-key": "/tmp/lyceum-sample_secret",
        "curve-server-key": "/tmp/lyceum-sample-broker",
        "authorized-keys": "/tmp/lyceum-sample-keys",
        "partitions": "8",
        "node": "sample-node",
        "insecure": "true",
        "join": "true",
        "replicas": "3",
        "etcd-endpoint": "http://127.0.0.1:6108",
        "replication-endpoint": "tcp://127.0.0.1:6109",
        "lease-ttl": "6",
        "lease-keep-alive": "1500",
        "lease-retry": "2200",
        "leader-balance-interval": "7000",
    ]

    /// The sample of `key`; a setting declared without one fails the test that asks for it.
    static func sample(_ key: SettingKey) -> String {
        let value = samples[key.rawValue]
        #expect(value != nil, "no sample value of \(key.rawValue): add one to SettingSourcesTests.samples")
        return value ?? ""
    }
}
