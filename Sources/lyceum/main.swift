import Foundation
import Lifecycle
import LyceumServer
import ZeroMQ

// Before anything starts a thread (a ZeroMQ context, a journal's syncer): the ServiceGroup
// owns SIGINT, SIGTERM and SIGHUP.
TerminationSignals.blockInAllThreads()

/// The version of Lyceum this binary was built from.
let lyceumVersion = "0.1.0"

let usage = """
    usage: lyceum <command> [--config FILE] [options]

    commands:
      serve     catalog, progress and books in one process, answered by its broker itself
                  [--endpoint EP]... [--data DIR] [--catalog PATH]...
                  [--durability always|none|interval[:MS]] [--metrics-port PORT]
      broker    only the broker        [--endpoint EP]... [--metrics-port PORT]
      worker    only workers           --broker EP [--service catalog|progress|books]... [--sessions N]
                  [--data DIR] [--catalog PATH]... [--durability POLICY] [--metrics-port PORT]
      call      send one request, print the reply
                  [--broker EP] [--timeout MS] SERVICE 'JSON'
                  exit 0: ok reply; 1: error reply; 3: no reply (timeout, unreachable broker)
      status    ask the broker's mmi.status: services, workers, queues, journals, uptime (JSON)
                  [--broker EP] [--timeout MS]
      config    print the effective configuration and where each value came from
      journal   check|repair|compact --data DIR
      watch     live dashboard of progress events (PUB/SUB with snapshot catch-up)
                  [--connect EP] [--snapshot EP | --no-snapshot] [--course ID] [--learner ID]
                  [--json | --plain]
      bench     load-test a broker: closed loop or fixed rate, verified replies, --json, --plot
                  (lyceum bench --help for its options)
      --version show Lyceum's and libzmq's versions and libzmq's capabilities
      --help    show this help

    every long-running command also takes --log-level LEVEL, --log-format auto|human|logfmt|json,
    --heartbeat-interval MS, --heartbeat-liveness N, --log-rate-limit N (lines/s per message),
    --metrics-connections N, --metrics-timeout MS; broker and serve --queue-limit N,
    --queue-limit-total N, --hwm N, --events-endpoint EP; serve --snapshot-endpoint EP; broker and
    worker --forwarder-endpoint EP; worker --reconnect-initial MS, --reconnect-max MS.
    Every setting can also come from LYCEUM_<NAME> (e.g. LYCEUM_LOG_LEVEL) or a --config FILE
    (JSON or key = value); precedence: flags > environment > file > defaults. See README.md,
    "Operations", for the table of settings and defaults.
    """

/// Settings every long-running command takes.
let commonKeys: Set<SettingKey> = [
    .logLevel, .logFormat, .metricsPort, .heartbeatInterval, .heartbeatLiveness, .logRateLimit, .metricsConnections, .metricsTimeout,
]
/// Settings of a process that runs a broker.
let brokerKeys: Set<SettingKey> = [.endpoint, .queueLimit, .queueLimitTotal, .highWaterMark, .eventsEndpoint]
/// Settings of a process that runs workers.
let workerKeys: Set<SettingKey> = [.data, .catalog, .sessions, .durability]

/// Resolves a subcommand's settings from flags, environment and configuration file, or exits
/// with status 2 naming the bad setting and its source.
func parse(_ arguments: ArraySlice<String>, command: String, accepting keys: Set<SettingKey>, positionals: Int) -> (CommandArguments, ConfigurationSources) {
    let sources = ConfigurationSources(arguments: Array(arguments), environment: ProcessInfo.processInfo.environment, accepting: keys)
    do {
        let parsed = try sources.resolve()
        if parsed.wantsHelp {
            print(usage)
            exit(0)
        }
        guard parsed.positionals.count == positionals else {
            let expected = positionals == 0 ? "no arguments" : "\(positionals) arguments"
            fail("lyceum \(command): expected \(expected), got \(parsed.positionals.count)")
        }
        return (parsed, sources)
    } catch {
        fail("lyceum \(command): \(error)")
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("\(message)\n\nrun 'lyceum --help' for usage\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments.dropFirst()
let rest = arguments.dropFirst()
switch arguments.first {
case "serve":
    let (parsed, sources) = parse(
        rest, command: "serve", accepting: commonKeys.union(brokerKeys).union(workerKeys).subtracting([.sessions]).union([.snapshotEndpoint]),
        positionals: 0)
    exit(Commands.serve(parsed.settings, reloading: sources))
case "broker":
    let (parsed, sources) = parse(rest, command: "broker", accepting: commonKeys.union(brokerKeys).union([.forwarderEndpoint]), positionals: 0)
    exit(Commands.broker(parsed.settings, reloading: sources))
case "worker":
    let (parsed, sources) = parse(
        rest, command: "worker",
        accepting: commonKeys.union(workerKeys).union([.broker, .service, .reconnectInitial, .reconnectMaximum, .forwarderEndpoint]),
        positionals: 0)
    guard parsed.settings.origins[.broker] != nil else {
        fail("lyceum worker: --broker is required (or broker in the --config file, or LYCEUM_BROKER)")
    }
    exit(Commands.worker(parsed.settings, reloading: sources))
case "call":
    let (parsed, _) = parse(rest, command: "call", accepting: [.broker, .timeout], positionals: 2)
    exit(CallCommand.run(service: parsed.positionals[0], body: parsed.positionals[1], settings: parsed.settings))
case "status":
    let (parsed, _) = parse(rest, command: "status", accepting: [.broker, .timeout], positionals: 0)
    exit(StatusCommand.run(settings: parsed.settings))
case "config":
    let (parsed, sources) = parse(rest, command: "config", accepting: Set(SettingKey.allCases), positionals: 0)
    print(ConfigCommand.render(parsed.settings, file: sources.configFile))
case "--version", "version":
    let capabilities = LibZMQ.Capability.allCases.map { "\($0.rawValue)=\(LibZMQ.has($0) ? "yes" : "no")" }
    print("lyceum \(lyceumVersion)")
    print("libzmq \(LibZMQ.version) (\(capabilities.joined(separator: " ")))")
case "journal": exit(runJournalCommand(Array(rest)))
case "bench": exit(runBenchCommand(Array(rest)))
case "watch": exit(runWatchCommand(Array(rest)))
case "--help", "-h", "help", nil:
    print(usage)
default:
    fail("lyceum: unknown command '\(arguments.first ?? "")'")
}
