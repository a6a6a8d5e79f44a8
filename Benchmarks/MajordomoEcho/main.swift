// mdp-bench: echo round trips through Lyceum's Majordomo broker over loopback TCP.
//
//   1. one synchronous Client, one request at a time, workers over loopback TCP;
//   2. one AsyncClient keeping 50 requests in flight over several worker sessions connected
//      over loopback TCP (as separate worker processes would be);
//   3. the same with the worker sessions connected over inproc (workers in the broker's process);
//   4. and 5. the same sessions served by one thread, a WorkerPool, over TCP and over inproc;
//   6. a LocalService: echo answered by the broker itself, on its thread, with no workers;
//   7. the reference, measured in the same run: the same 50-in-flight client straight to a
//      ROUTER that echoes, without broker or workers: the ceiling libzmq allows here;
//   8. and 9. with `--c-reference PATH` (mdp_reference.c, built by Benchmarks/mdp-bench.sh): the
//      same clients against a C broker and C echo workers in a process of their own, workers over
//      loopback TCP (the synchronous client and 50 in flight) and over inproc (50 in flight).
// Clients always reach the broker over loopback TCP, from a context of their own. Every reply
// must echo its own request's body, or the run fails.
//
// Prints requests per second and p50/p99 round-trip latency for each, and the ratios of each
// Lyceum broker scenario to the broker-less reference and to the C broker with the same worker
// transport (tcp, pool-tcp and the synchronous client to c-tcp; inproc, pool-inproc and local to c-inproc).
//
//   mdp-bench [--seconds S] [--workers N] [--in-flight N] [--body-bytes N] [--c-reference PATH]
//             [--only sync|tcp|inproc|pool-tcp|pool-inproc|local|reference|c-tcp|c-inproc[,…]]
//
// `--only` runs one measurement, to profile it (`perf record`, `strace -c`) without the others,
// or several, separated by commas (`make bench` runs tcp,inproc,c-tcp,c-inproc for its ratios).
import Foundation
import LyceumLifecycle
import LyceumLogging
import LyceumSupport
import Majordomo
import ZeroMQ

struct Settings {
    /// The measurements, in the order they run.
    enum Scenario: String, CaseIterable {
        case sync, tcp, inproc
        case poolTCP = "pool-tcp"
        case poolInproc = "pool-inproc"
        case local
        case reference
        case cTCP = "c-tcp"
        case cInproc = "c-inproc"

        /// Whether it measures the C broker of `--c-reference`.
        var needsCReference: Bool { self == .cTCP || self == .cInproc }
    }

    var seconds = 5.0
    var workers = 16
    var inFlight = 50
    var bodyBytes = 64
    var scenarios = Scenario.allCases
    /// The C reference program (mdp_reference.c, compiled).
    var cReference: String?

    init(_ arguments: [String]) {
        var only: [Scenario]?
        var iterator = arguments.makeIterator()
        while let name = iterator.next() {
            if name == "--only" {
                let names = (iterator.next() ?? "").split(separator: ",", omittingEmptySubsequences: false)
                let chosen = names.compactMap { Scenario(rawValue: String($0)) }
                guard chosen.count == names.count else {
                    fail("--only needs one or more of \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")), separated by commas")
                }
                only = chosen
                continue
            }
            if name == "--c-reference" {
                guard let path = iterator.next() else { fail("--c-reference needs the path of the compiled mdp_reference.c") }
                cReference = path
                continue
            }
            guard let text = iterator.next(), let value = Double(text), value > 0 else {
                fail("\(name) needs a positive number")
            }
            switch name {
            case "--seconds": seconds = value
            case "--workers": workers = Int(value)
            case "--in-flight": inFlight = Int(value)
            case "--body-bytes": bodyBytes = Int(value)
            default: fail("unknown option \(name)")
            }
        }
        if let only {
            if let needing = only.first(where: \.needsCReference), cReference == nil {
                fail("--only \(needing.rawValue) needs --c-reference PATH")
            }
            scenarios = Scenario.allCases.filter(only.contains)
        } else if cReference == nil {
            scenarios.removeAll(where: \.needsCReference)
        }
    }
}

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("mdp-bench: \(text)\n".utf8))
    exit(2)
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("mdp-bench: \(text)\n".utf8))
}

/// Round-trip latencies of one run, and how long it took.
struct Measurement {
    var name: String
    var latencies: [Duration] = []
    var elapsed: Duration = .zero

    var requestsPerSecond: Double { Double(latencies.count) / elapsed.seconds }

    func percentile(_ fraction: Double) -> Duration {
        let sorted = latencies.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    var line: String {
        let p50 = percentile(0.50).seconds * 1_000_000
        let p99 = percentile(0.99).seconds * 1_000_000
        return "\(name.padding(toLength: 44, withPad: " ", startingAt: 0)) \(String(format: "%9.0f req/s   p50 %7.1f µs   p99 %7.1f µs   (%d requests)", requestsPerSecond, p50, p99, latencies.count))"
    }
}


let settings = Settings(Array(CommandLine.arguments.dropFirst()))
let clock = ContinuousClock()
Logger.configure(level: .warning, format: Logger.defaultFormat)

/// Runs `sendAndCollect` for the configured time, printing progress each second.
func measure(_ name: String, warmUp: Duration = .milliseconds(500), _ step: (inout Measurement, Bool) throws -> Void) rethrows -> Measurement {
    var measurement = Measurement(name: name)
    let warmUntil = clock.now + warmUp
    while clock.now < warmUntil { try step(&measurement, false) }
    measurement.latencies.removeAll(keepingCapacity: true)
    let start = clock.now
    let end = start + .milliseconds(Int(settings.seconds * 1000))
    var nextReport = start + .seconds(1)
    while clock.now < end {
        try step(&measurement, true)
        if clock.now >= nextReport {
            progress("\(name): \(measurement.latencies.count) round trips so far")
            nextReport = nextReport + .seconds(1)
        }
    }
    measurement.elapsed = clock.now - start
    return measurement
}

/// A broker with echo worker sessions, for one or more measurements.
final class EchoBroker {
    let broker: Broker
    let brokerThread: ComponentThread
    let workers: [ComponentThread]
    /// Where clients connect: loopback TCP.
    let endpoint: String

    /// Workers connect over `inproc` (sharing the broker's context) or loopback `tcp` (with a
    /// context of their own, as in another process); each session on a thread of its own, or
    /// all of them in one `WorkerPool`.
    init(workersOverInproc: Bool, pooled: Bool = false) throws {
        let brokerContext = try Context(ioThreads: 1)
        broker = try Broker(endpoints: ["tcp://127.0.0.1:*", "inproc://mdp-bench-\(workersOverInproc)"],
                            configuration: BrokerConfiguration(), context: brokerContext)
        brokerThread = ComponentThread(broker, name: "broker")
        let bound = try broker.waitUntilBound()
        endpoint = bound[0]
        let workerEndpoint = workersOverInproc ? bound[1] : endpoint
        let workerContext = workersOverInproc ? brokerContext : try Context(ioThreads: 1)
        if pooled {
            workers = [ComponentThread(try WorkerPool(endpoint: workerEndpoint, service: "echo", sessions: settings.workers,
                                                    context: workerContext) { body, _, _ in body }, name: "worker-pool")]
        } else {
            workers = try (0..<settings.workers).map { index in
                ComponentThread(try WorkerSession(endpoint: workerEndpoint, service: "echo", context: workerContext) { $0 },
                              name: "worker-\(index)")
            }
        }
        progress("broker on \(endpoint), \(settings.workers) worker sessions over \(workerEndpoint)\(pooled ? " in one pool" : "")")
    }

    func stop() {
        for worker in workers { worker.stop() }
        brokerThread.stop()
    }
}

do {
    let clientContext = try Context(ioThreads: 1)
    progress("\(settings.bodyBytes)-byte bodies, \(settings.seconds) s per run")
    let runs = Set(settings.scenarios)
    var results = Results()

    if runs.contains(.sync) || runs.contains(.tcp) {
        let overTCP = try EchoBroker(workersOverInproc: false)
        if runs.contains(.sync) {
            results.add(Settings.Scenario.sync.rawValue, try measureSynchronous(
                "broker, 1 synchronous client, tcp workers", endpoint: overTCP.endpoint, context: clientContext))
        }
        if runs.contains(.tcp) {
            results.add(Settings.Scenario.tcp.rawValue, try measureInFlight(
                "broker, \(settings.inFlight) in flight, \(settings.workers) tcp workers",
                endpoint: overTCP.endpoint, context: clientContext))
        }
        overTCP.stop()
    }

    if runs.contains(.inproc) {
        let overInproc = try EchoBroker(workersOverInproc: true)
        results.add(Settings.Scenario.inproc.rawValue, try measureInFlight(
            "broker, \(settings.inFlight) in flight, \(settings.workers) inproc workers",
            endpoint: overInproc.endpoint, context: clientContext))
        overInproc.stop()
    }

    for (scenario, inproc) in [(Settings.Scenario.poolTCP, false), (.poolInproc, true)] where runs.contains(scenario) {
        let pooled = try EchoBroker(workersOverInproc: inproc, pooled: true)
        results.add(scenario.rawValue, try measureInFlight(
            "broker, \(settings.inFlight) in flight, pool of \(settings.workers) \(inproc ? "inproc" : "tcp")",
            endpoint: pooled.endpoint, context: clientContext))
        pooled.stop()
    }

    if runs.contains(.local) {
        let context = try Context(ioThreads: 1)
        let broker = try Broker(endpoints: ["tcp://127.0.0.1:*"], configuration: BrokerConfiguration(
            localServices: [LocalService(name: "echo") { body, _, _ in body }]), context: context)
        let thread = ComponentThread(broker, name: "broker")
        results.add(Settings.Scenario.local.rawValue, try measureInFlight(
            "broker, \(settings.inFlight) in flight, local service",
            endpoint: try broker.waitUntilBound()[0], context: clientContext))
        thread.stop()
    }

    if runs.contains(.reference) {
        results.add(Settings.Scenario.reference.rawValue, try directEchoReference(context: clientContext) { echoEndpoint in
            try measureInFlight("reference: \(settings.inFlight) in flight, no broker", endpoint: echoEndpoint, context: clientContext)
        })
    }

    if let executable = settings.cReference {
        for (scenario, transport) in [(Settings.Scenario.cTCP, CReference.WorkerTransport.tcp), (.cInproc, .inproc)]
        where runs.contains(scenario) {
            try CReference.running(executable, workers: settings.workers, transport: transport) { reference in
                if scenario == .cTCP {
                    results.add(Results.cSync, try measureSynchronous(
                        "C broker, 1 synchronous client, tcp workers", endpoint: reference.endpoint, context: clientContext))
                }
                results.add(scenario.rawValue, try measureInFlight(
                    "C broker, \(settings.inFlight) in flight, \(settings.workers) \(transport.rawValue) workers",
                    endpoint: reference.endpoint, context: clientContext))
            }
        }
    }

    print("Majordomo echo: clients over loopback TCP, \(settings.bodyBytes)-byte bodies, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    for result in results.all { print(result.measurement.line) }
    let reference = results[Settings.Scenario.reference.rawValue]
    for (lyceum, c) in cCounterparts {
        guard let measurement = results[lyceum] else { continue }
        let synchronous = lyceum == Settings.Scenario.sync.rawValue
        var ratios: [String] = []
        if let reference, !synchronous {
            ratios.append(String(format: "%.2f× the reference without broker", measurement.requestsPerSecond / reference.requestsPerSecond))
        }
        if let counterpart = results[c] {
            ratios.append(String(format: "%.2f× the C broker and workers of this run, %@",
                                 measurement.requestsPerSecond / counterpart.requestsPerSecond, c))
        }
        if !synchronous {
            ratios.append(String(format: "%.1f–%.1f× the guide's C broker (goal ≥ 5×)",
                                 measurement.requestsPerSecond / 12_000, measurement.requestsPerSecond / 6_000))
        }
        if !ratios.isEmpty { print("\(measurement.name): \(ratios.joined(separator: ", "))") }
    }
    print("The ZeroMQ guide puts its C broker, worker and client at roughly 6–12k round trips/s on this kind of machine; issue 3 asks for 5× that with 50 in flight.")
} catch {
    fail("\(error)")
}
