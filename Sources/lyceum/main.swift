import Foundation
import ZeroMQ

/// The version of Lyceum this binary was built from.
let lyceumVersion = "0.1.0"

let usage = """
    usage: lyceum <command> [options]

    commands:
      --help        show this help
      --version     show Lyceum's and libzmq's versions and libzmq's capabilities
    """

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--version", "version":
    let capabilities = LibZMQ.Capability.allCases.map { "\($0.rawValue)=\(LibZMQ.has($0) ? "yes" : "no")" }
    print("lyceum \(lyceumVersion)")
    print("libzmq \(LibZMQ.version) (\(capabilities.joined(separator: " ")))")
case "journal": exit(runJournalCommand(Array(arguments.dropFirst())))
case "watch": exit(runWatchCommand(Array(arguments.dropFirst())))
case "--help", "-h", "help", nil:
    print(usage)
default:
    FileHandle.standardError.write(Data("lyceum: unknown command '\(arguments[0])'\n\n\(usage)\n".utf8))
    exit(2)
}
