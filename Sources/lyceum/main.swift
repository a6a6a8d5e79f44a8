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
    usage: lyceum <command> [options]

    commands:
      serve     broker and workers for catalog, progress and books in one process
                  [--endpoint EP]... [--data DIR] [--catalog PATH]... [--sessions N]
                  [--durability always|none|interval[:MS]] [--log-level LEVEL]
      broker    only the broker        [--endpoint EP]... [--log-level LEVEL]
      worker    only workers           --broker EP [--service catalog|progress|books]... [--sessions N]
                  [--data DIR] [--catalog PATH]... [--durability POLICY] [--log-level LEVEL]
      call      send one request, print the reply
                  [--broker EP] [--timeout MS] SERVICE 'JSON'
                  exit 0: ok reply; 1: error reply; 3: no reply (timeout, unreachable broker)
      journal   check|repair|compact --data DIR
      --version show Lyceum's and libzmq's versions and libzmq's capabilities
      --help    show this help

    defaults: endpoint and broker tcp://127.0.0.1:5555, data ./lyceum-data, the sample catalog,
    4 sessions per service, durability always, log level info
    """

/// Parses the flags a subcommand accepts, or exits with status 2 naming the bad flag.
func parse(_ arguments: ArraySlice<String>, command: String, accepting keys: Set<SettingKey>, positionals: Int) -> CommandArguments {
    do {
        let parsed = try CommandArguments(Array(arguments), accepting: keys)
        if parsed.wantsHelp {
            print(usage)
            exit(0)
        }
        guard parsed.positionals.count == positionals else {
            let expected = positionals == 0 ? "no arguments" : "\(positionals) arguments"
            fail("lyceum \(command): expected \(expected), got \(parsed.positionals.count)")
        }
        return parsed
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
    let parsed = parse(rest, command: "serve", accepting: [.endpoint, .data, .catalog, .sessions, .durability, .logLevel], positionals: 0)
    exit(Commands.serve(parsed.settings))
case "broker":
    let parsed = parse(rest, command: "broker", accepting: [.endpoint, .logLevel], positionals: 0)
    exit(Commands.broker(parsed.settings))
case "worker":
    let parsed = parse(rest, command: "worker", accepting: [.broker, .service, .sessions, .data, .catalog, .durability, .logLevel], positionals: 0)
    guard parsed.settings.origins[.broker] != nil else { fail("lyceum worker: --broker is required") }
    exit(Commands.worker(parsed.settings))
case "call":
    let parsed = parse(rest, command: "call", accepting: [.broker, .timeout], positionals: 2)
    exit(CallCommand.run(service: parsed.positionals[0], body: parsed.positionals[1], settings: parsed.settings))
case "--version", "version":
    let capabilities = LibZMQ.Capability.allCases.map { "\($0.rawValue)=\(LibZMQ.has($0) ? "yes" : "no")" }
    print("lyceum \(lyceumVersion)")
    print("libzmq \(LibZMQ.version) (\(capabilities.joined(separator: " ")))")
case "journal": exit(runJournalCommand(Array(rest)))
case "bench": exit(runBenchCommand(Array(rest)))
case "--help", "-h", "help", nil:
    print(usage)
default:
    fail("lyceum: unknown command '\(arguments.first ?? "")'")
}
