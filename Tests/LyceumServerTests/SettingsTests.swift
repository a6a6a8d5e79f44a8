import Configuration
import CommandSyntax
import LoadTest
import LyceumServer
import LyceumTestSupport
import ProgressWatch
import Testing

struct SettingsTests {
    @Test func defaultsAreTheDocumentedOnes() {
        let settings = Settings()
        #expect(settings.endpoints == ["tcp://127.0.0.1:5555"])
        #expect(settings.dataDirectory == "./lyceum-data")
        #expect(settings.catalogPaths.isEmpty)
        #expect(settings.services.isEmpty)  // every service
        #expect(settings.origins.isEmpty)
    }

    @Test func flagsOverrideDefaultsAndRepeatableFlagsAccumulate() throws {
        let parsed = try CommandArguments(
            ["--endpoint", "tcp://127.0.0.1:7000", "--endpoint=ipc:///tmp/l", "--sessions=3", "--durability", "interval:50",
             "--service", "books", "--service", "books", "books", "{}"],
            accepting: [.endpoint, .sessions, .durability, .service])
        #expect(parsed.settings.endpoints == ["tcp://127.0.0.1:7000", "ipc:///tmp/l"])
        #expect(parsed.settings.sessionsPerService == 3)
        #expect(parsed.settings.durability == .interval(milliseconds: 50))
        #expect(parsed.settings.services == ["books"])
        #expect(parsed.settings.origins[.sessions] == .commandLine)
        #expect(parsed.positionals == ["books", "{}"])
    }

    @Test func argumentsAfterADoubleDashArePositional() throws {
        let parsed = try CommandArguments(["--", "books", "--sessions"], accepting: [.sessions])
        #expect(parsed.positionals == ["books", "--sessions"])
    }

    @Test(arguments: [
        (["--sessions", "65"], SettingKey.sessions, "expected an integer from 1 to 64, got '65'"),
        (["--timeout", "-1"], .timeout, "expected milliseconds from 1 to 600000, got '-1'"),
        (["--log-level", "loud"], .logLevel, "got 'loud'"),
        (["--sessions"], .sessions, "needs a value"),
        (["--events-endpoint", "127.0.0.1:5556"], .eventsEndpoint, "expected an endpoint such as tcp://127.0.0.1:5556, or none for no events, got '127.0.0.1:5556'"),
        (["--forwarder-endpoint", ""], .forwarderEndpoint, "got ''"),
        (["--max-reply-bytes", "1024"], .maxReplyBytes, "expected bytes from 4096 to 16777216, got '1024'"),
        (["--partitions", "4097"], .partitions, "expected 0 (unpartitioned) or a partition count from 1 to 4096, got '4097'"),
        (["--partitions", "-1"], .partitions, "got '-1'"),
        (["--partitions", "08x"], .partitions, "got '08x'"),
        (["--node", "w 1"], .node, "got 'w 1'"),
        (["--node", ""], .node, "got ''"),
    ])
    func badValuesNameTheFlag(arguments: [String], key: SettingKey, message: String) {
        #expect {
            try CommandArguments(
                arguments, accepting: [.sessions, .timeout, .logLevel, .eventsEndpoint, .forwarderEndpoint, .maxReplyBytes, .partitions, .node])
        } throws: { error in
            guard let error = error as? SettingsError else { return false }
            return error.key == key && error.description.hasPrefix(key.flag + ": ") && error.message.contains(message)
        }
    }

    @Test func partitionsAndNodeDefaultToUnpartitionedAndTheHostName() throws {
        let defaults = try CommandArguments([], accepting: [.partitions, .node]).settings
        #expect(defaults.partitions == 0 && defaults.partitionScheme == nil)
        #expect(!defaults.node.isEmpty && defaults.node.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
        let set = try CommandArguments(["--partitions", "8", "--node", "w1.example"], accepting: [.partitions, .node]).settings
        #expect(set.partitionScheme?.count == 8 && set.node == "w1.example")
    }

    @Test func maxReplyBytesIsReadFromTheCommandLine() throws {
        #expect(try CommandArguments([], accepting: [.maxReplyBytes]).settings.maxReplyBytes == 262_144)
        #expect(try CommandArguments(["--max-reply-bytes", "4096"], accepting: [.maxReplyBytes]).settings.maxReplyBytes == 4_096)
    }

    @Test func eventsEndpointNoneTurnsEventsOff() throws {
        #expect(try CommandArguments([], accepting: [.eventsEndpoint]).settings.publishesEvents)
        let off = try CommandArguments(["--events-endpoint", "none"], accepting: [.eventsEndpoint])
        #expect(!off.settings.publishesEvents)
    }

    @Test func flagsOfOtherCommandsAreUnknown() {
        #expect {
            try CommandArguments(["--data", "x"], accepting: [.endpoint])
        } throws: { error in
            "\(error)" == "unknown flag --data; this command takes --endpoint"
        }
    }
}

/// Every subcommand's `--help` is generated from its declaration and lists every option.
struct CommandHelpTests {
    @Test(arguments: ["serve", "broker", "worker", "call", "status", "config", "journal check", "journal repair", "journal compact",
                      "watch", "bench", "bench plot", "partitions init"])
    func helpListsEveryDeclaredOption(command: String) throws {
        let words = command.split(separator: " ").map(String.init)
        let result = try LyceumProcess.run(words + ["--help"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("usage: lyceum \(command)"), "\(result.stdout)")
        let commands = [LyceumCommands.serve, LyceumCommands.broker, LyceumCommands.worker, LyceumCommands.call,
                        LyceumCommands.status, LyceumCommands.config, JournalCommand.declaration, WatchCommand.declaration, BenchCommand.declaration,
                        PartitionsCommand.declaration]
        var declaration = try #require(commands.first { $0.name == words[0] })
        if words.count > 1 { declaration = try #require(declaration.subcommands.first { $0.name == words[1] }) }
        #expect(!declaration.options.isEmpty || !declaration.positionals.isEmpty)
        for option in declaration.options {
            #expect(result.stdout.contains(option.flag + " "), "\(option.flag) missing from lyceum \(command) --help")
        }
        #expect(result.stdout.contains("--help"))
    }

    @Test func settingsCommandsListEverySettingTheyAccept() throws {
        let result = try LyceumProcess.run(["config", "--help"])
        for key in SettingKey.allCases {
            #expect(result.stdout.contains(key.flag + " ") && result.stdout.contains(key.environmentVariable), "\(key)")
        }
        #expect(result.stdout.contains("--config FILE"))
    }

    @Test func theProgramsHelpListsEveryCommand() throws {
        let result = try LyceumProcess.run(["--help"])
        #expect(result.status == 0)
        for command in ["serve", "broker", "worker", "call", "status", "config", "journal", "watch", "bench", "partitions", "version"] {
            #expect(result.stdout.contains("\n  \(command) "), "\(command) missing from lyceum --help")
        }
    }

    @Test func anUnknownFlagExitsTwoNamingItAndListingTheKnownOnes() throws {
        let result = try LyceumProcess.run(["status", "--colour", "red"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("lyceum status: unknown flag --colour; this command takes --broker, --config, --curve-secret-key, --curve-server-key, --json, --partitions, --print-settings, --timeout"), "\(result.stderr)")
        #expect(result.stderr.contains("run 'lyceum status --help' for usage"))
    }
}
