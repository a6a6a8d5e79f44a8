// mdp-peer: a Majordomo broker or echo worker in a process of its own, for tests that kill
// and restart processes. It prints one line per event the tests wait for on stdout:
//   broker: "bound <endpoint>" once per endpoint;  worker: "ready", and with --announce
//   "serving" when a request starts. SIGINT and SIGTERM shut the services down gracefully.
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Majordomo
import ZeroMQ

let usage = """
    usage: mdp-peer broker --bind <endpoint>... [--heartbeat-ms N] [--liveness N] [--unknown-service-ms N]
           mdp-peer worker --connect <endpoint> --service <name> [--sessions N] [--delay-ms N] [--tag TEXT]
                           [--announce] [--heartbeat-ms N] [--liveness N] [--reconnect-ms N] [--reconnect-max-ms N]
    """

struct Options {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []

    init(_ arguments: ArraySlice<String>) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard argument.hasPrefix("--") else { throw UsageError(text: "unexpected argument '\(argument)'") }
            let name = String(argument.dropFirst(2))
            if name == "announce" {
                flags.insert(name)
            } else if let value = iterator.next() {
                values[name, default: []].append(value)
            } else {
                throw UsageError(text: "\(argument) needs a value")
            }
        }
    }

    func string(_ name: String) throws -> String {
        guard let value = values[name]?.last else { throw UsageError(text: "--\(name) is required") }
        return value
    }

    func int(_ name: String, default fallback: Int) throws -> Int {
        guard let text = values[name]?.last else { return fallback }
        guard let value = Int(text), value >= 0 else { throw UsageError(text: "--\(name) wants a non-negative integer, got '\(text)'") }
        return value
    }

    func heartbeat() throws -> Heartbeat {
        Heartbeat(interval: .milliseconds(try int("heartbeat-ms", default: 2500)), liveness: try int("liveness", default: 3))
    }
}

struct UsageError: Error { let text: String }

/// Prints a line to stdout at once, since the tests read it through a pipe.
func announce(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Starts the services on threads of their own and shuts them down on SIGINT or SIGTERM.
/// `started` runs once the threads are, to announce what the tests wait for.
func runUntilSignaled(_ services: [any Service], started: () -> Void) -> Int32 {
    let threads = services.enumerated().map { ServiceThread($0.element, name: "mdp-peer-\($0.offset)") }
    var sources: [any DispatchSourceSignal] = []
    for signalNumber in [SIGINT, SIGTERM] {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler { for thread in threads { thread.service.shutdown() } }
        source.resume()
        sources.append(source)
    }
    started()
    var status: Int32 = 0
    for thread in threads {
        if let error = thread.join() {
            FileHandle.standardError.write(Data("mdp-peer: \(error)\n".utf8))
            status = 1
        }
    }
    for source in sources { source.cancel() }
    return status
}

func main() -> Int32 {
    let arguments = CommandLine.arguments.dropFirst()
    do {
        let options = try Options(arguments.dropFirst())
        let context = try Context()
        switch arguments.first {
        case "broker":
            guard let endpoints = options.values["bind"], !endpoints.isEmpty else { throw UsageError(text: "--bind is required") }
            let configuration = BrokerConfiguration(
                heartbeat: try options.heartbeat(),
                unknownServiceTimeout: .milliseconds(try options.int("unknown-service-ms", default: 2000)))
            let broker = try Broker(endpoints: endpoints, configuration: configuration, context: context)
            return runUntilSignaled([broker]) {
                do {
                    for endpoint in try broker.waitUntilBound() { announce("bound \(endpoint)") }
                } catch {
                    // run() has ended with this failure too; its thread's join reports the exit status.
                    FileHandle.standardError.write(Data("mdp-peer: \(error)\n".utf8))
                }
            }
        case "worker":
            let configuration = WorkerConfiguration(
                heartbeat: try options.heartbeat(),
                reconnectInitialDelay: .milliseconds(try options.int("reconnect-ms", default: 1000)),
                reconnectMaximumDelay: .milliseconds(try options.int("reconnect-max-ms", default: 32_000)))
            let delay = try options.int("delay-ms", default: 0)
            let tag = options.values["tag"]?.last.map { Array($0.utf8) }
            let announcing = options.flags.contains("announce")
            let handler: WorkerSession.Handler = { body in
                if announcing { announce("serving") }
                if delay > 0 { usleep(UInt32(delay) * 1000) }
                return tag.map { body + [$0] } ?? body
            }
            let sessions = try (0..<max(1, try options.int("sessions", default: 1))).map { _ in
                try WorkerSession(endpoint: try options.string("connect"), service: try options.string("service"),
                                  configuration: configuration, context: context, handler: handler)
            }
            return runUntilSignaled(sessions) { announce("ready") }
        default:
            throw UsageError(text: "unknown role '\(arguments.first ?? "")'")
        }
    } catch let error as UsageError {
        FileHandle.standardError.write(Data("mdp-peer: \(error.text)\n\(usage)\n".utf8))
        return 2
    } catch {
        FileHandle.standardError.write(Data("mdp-peer: \(error)\n".utf8))
        return 1
    }
}

exit(main())
