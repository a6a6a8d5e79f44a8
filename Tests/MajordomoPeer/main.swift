// mdp-peer: a Majordomo broker, echo worker or client in a process of its own, for tests that
// kill and restart processes. It prints one line per event the tests wait for on stdout:
//   broker: "bound <endpoint>" once per endpoint;  worker: "ready", and with --announce
//   "serving" when a request starts;  client: "ok <count>", or "error <code>" and exit status 1.
// SIGINT and SIGTERM shut brokers and workers down gracefully.
#if canImport(Glibc)
import Glibc
import LyceumLifecycle
#endif
import Dispatch
import Foundation
import Majordomo
import Synchronization
import ZeroMQ

let usage = """
    usage: mdp-peer broker --bind <endpoint>... [--heartbeat-ms N] [--liveness N] [--unknown-service-ms N]
           mdp-peer worker --connect <endpoint> --service <name> [--sessions N] [--delay-ms N] [--tag TEXT]
                           [--announce] [--heartbeat-ms N] [--liveness N] [--reconnect-ms N] [--reconnect-max-ms N]
           mdp-peer client --connect <endpoint> --service <name> [--requests N] [--timeout-ms N] [--attempts N]
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

/// The services a signal shuts down, emptied once they have stopped so that nothing keeps them
/// (and their context, whose termination delivers the last DISCONNECTs) alive until exit.
final class SignalTargets: Sendable {
    private let services: Mutex<[any Component]>

    init(_ services: [any Component]) { self.services = Mutex(services) }

    func shutdownAll() { services.withLock { $0 }.forEach { $0.shutdown() } }
    func release() { services.withLock { $0 = [] } }
}

/// Starts the services on threads of their own and shuts them down on SIGINT or SIGTERM.
/// `started` runs once the threads are, to announce what the tests wait for.
func runUntilSignaled(_ services: [any Component], started: () -> Void) -> Int32 {
    let threads = services.enumerated().map { ComponentThread($0.element, name: "mdp-peer-\($0.offset)") }
    let targets = SignalTargets(services)
    let signalQueue = DispatchQueue(label: "mdp-peer.signals")
    var sources: [any DispatchSourceSignal] = []
    for signalNumber in [SIGINT, SIGTERM] {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: signalQueue)
        source.setEventHandler { targets.shutdownAll() }
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
    targets.release()
    // A handler still running holds the services, and with them the context whose
    // termination (when the last reference goes) delivers the final DISCONNECTs: let it end.
    signalQueue.sync {}
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
                if delay > 0 { Thread.sleep(forTimeInterval: Double(delay) / 1000) }
                return tag.map { body + [$0] } ?? body
            }
            let sessionCount = try options.int("sessions", default: 1)
            guard (1...256).contains(sessionCount) else { throw UsageError(text: "--sessions wants 1 to 256") }
            let sessions = try (0..<sessionCount).map { _ in
                try WorkerSession(endpoint: try options.string("connect"), service: try options.string("service"),
                                  configuration: configuration, context: context, handler: handler)
            }
            return runUntilSignaled(sessions) { announce("ready") }
        case "client":
            let configuration = ClientConfiguration(
                timeout: .milliseconds(try options.int("timeout-ms", default: 2500)), attempts: try options.int("attempts", default: 3))
            let client = Client(endpoint: try options.string("connect"), configuration: configuration, context: context)
            let count = try options.int("requests", default: 1)
            let service = try options.string("service")
            for index in 0..<count {
                let body = [Array("request \(index)".utf8)]
                do throws(MajordomoError) {
                    let reply = try client.call(service, body: body)
                    guard reply.starts(with: body) else {
                        announce("error mismatch")
                        return 1
                    }
                } catch {
                    announce("error \(error.code)")
                    return 1
                }
            }
            announce("ok \(count)")
            return 0
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
