// mdp-bench: echo round trips through Lyceum's Majordomo broker over loopback TCP.
//
//   1. one synchronous Client, one request at a time, workers over loopback TCP;
//   2. one AsyncClient keeping 50 requests in flight over several worker sessions connected
//      over loopback TCP (as separate worker processes would be);
//   3. the same with the worker sessions connected over inproc (workers in the broker's process);
//   4. and 5. the same sessions served by one thread, a WorkerPool, over TCP and over inproc;
//   6. a LocalService: echo answered by the broker itself, on its thread, with no workers;
//   7. the reference, measured in the same run: the same 50-in-flight client straight to a
//      ROUTER that echoes, without broker or workers: the ceiling libzmq allows here.
// Clients always reach the broker over loopback TCP, from a context of their own.
//
// Prints requests per second and p50/p99 round-trip latency for each, and the ratios to the
// reference and to the ZeroMQ guide's C broker (about 12 000 round trips/s at best).
//
//   mdp-bench [--seconds S] [--workers N] [--in-flight N] [--body-bytes N] [--only sync|tcp|inproc|pool-tcp|pool-inproc|local|reference]
//
// `--only` runs one measurement, to profile it (`perf record`, `strace -c`) without the others.
import Foundation
import Lifecycle
import Logging
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
    }

    var seconds = 5.0
    var workers = 16
    var inFlight = 50
    var bodyBytes = 64
    var scenarios = Scenario.allCases

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let name = iterator.next() {
            if name == "--only" {
                guard let text = iterator.next(), let scenario = Scenario(rawValue: text) else {
                    fail("--only needs one of \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                scenarios = [scenario]
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

    var requestsPerSecond: Double { Double(latencies.count) / seconds(elapsed) }

    func percentile(_ fraction: Double) -> Duration {
        let sorted = latencies.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    var line: String {
        let p50 = seconds(percentile(0.50)) * 1_000_000
        let p99 = seconds(percentile(0.99)) * 1_000_000
        return "\(name.padding(toLength: 44, withPad: " ", startingAt: 0)) \(String(format: "%9.0f req/s   p50 %7.1f µs   p99 %7.1f µs   (%d requests)", requestsPerSecond, p50, p99, latencies.count))"
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

let settings = Settings(Array(CommandLine.arguments.dropFirst()))
let clock = ContinuousClock()
let body = [[UInt8](repeating: 0x2A, count: settings.bodyBytes)]
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

/// Keeps `client` full with requests and records each one's round trip.
func pipelined(_ client: AsyncClient, into measurement: inout Measurement, recording: Bool, sentAt: inout [AsyncClient.RequestID: ContinuousClock.Instant]) throws {
    while client.inFlight < client.capacity {
        sentAt[try client.send("echo", body: body)] = clock.now
    }
    guard let completion = try client.receive(timeout: .seconds(5)) else { fail("no reply within 5 s") }
    _ = try completion.result.get()
    let sent = sentAt.removeValue(forKey: completion.id)!
    if recording { measurement.latencies.append(clock.now - sent) }
}

/// A broker with echo worker sessions, for one or more measurements.
final class EchoBroker {
    let broker: Broker
    let brokerThread: ServiceThread
    let workers: [ServiceThread]
    /// Where clients connect: loopback TCP.
    let endpoint: String

    /// Workers connect over `inproc` (sharing the broker's context) or loopback `tcp` (with a
    /// context of their own, as in another process); each session on a thread of its own, or
    /// all of them in one `WorkerPool`.
    init(workersOverInproc: Bool, pooled: Bool = false) throws {
        let brokerContext = try Context(ioThreads: 1)
        broker = try Broker(endpoints: ["tcp://127.0.0.1:*", "inproc://mdp-bench-\(workersOverInproc)"],
                            configuration: BrokerConfiguration(), context: brokerContext)
        brokerThread = ServiceThread(broker, name: "broker")
        let bound = try broker.waitUntilBound()
        endpoint = bound[0]
        let workerEndpoint = workersOverInproc ? bound[1] : endpoint
        let workerContext = workersOverInproc ? brokerContext : try Context(ioThreads: 1)
        if pooled {
            workers = [ServiceThread(try WorkerPool(endpoint: workerEndpoint, service: "echo", sessions: settings.workers,
                                                    context: workerContext) { body, _ in body }, name: "worker-pool")]
        } else {
            workers = try (0..<settings.workers).map { index in
                ServiceThread(try WorkerSession(endpoint: workerEndpoint, service: "echo", context: workerContext) { $0 },
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

/// Measures `settings.inFlight` requests kept in flight against `endpoint`.
func measureInFlight(_ name: String, endpoint: String, context: Context) throws -> Measurement {
    let client = AsyncClient(endpoint: endpoint, capacity: settings.inFlight, context: context)
    defer { client.close() }
    var sentAt: [AsyncClient.RequestID: ContinuousClock.Instant] = [:]
    let measurement = try measure(name) { measurement, recording in
        try pipelined(client, into: &measurement, recording: recording, sentAt: &sentAt)
    }
    while try client.receive(timeout: .seconds(1)) != nil {}
    return measurement
}

do {
    let clientContext = try Context(ioThreads: 1)
    progress("\(settings.bodyBytes)-byte bodies, \(settings.seconds) s per run")
    let runs = Set(settings.scenarios)
    var measurements: [Measurement] = []
    var brokered: [Measurement] = []

    if runs.contains(.sync) || runs.contains(.tcp) {
        let overTCP = try EchoBroker(workersOverInproc: false)
        if runs.contains(.sync) {
            let client = Client(endpoint: overTCP.endpoint, context: clientContext)
            measurements.append(try measure("broker, 1 synchronous client, tcp workers") { measurement, recording in
                let start = clock.now
                _ = try client.call("echo", body: body)
                if recording { measurement.latencies.append(clock.now - start) }
            })
            client.close()
        }
        if runs.contains(.tcp) {
            brokered.append(try measureInFlight("broker, \(settings.inFlight) in flight, \(settings.workers) tcp workers",
                                                endpoint: overTCP.endpoint, context: clientContext))
        }
        overTCP.stop()
    }

    if runs.contains(.inproc) {
        let overInproc = try EchoBroker(workersOverInproc: true)
        brokered.append(try measureInFlight("broker, \(settings.inFlight) in flight, \(settings.workers) inproc workers",
                                            endpoint: overInproc.endpoint, context: clientContext))
        overInproc.stop()
    }

    for (scenario, inproc) in [(Settings.Scenario.poolTCP, false), (.poolInproc, true)] where runs.contains(scenario) {
        let pooled = try EchoBroker(workersOverInproc: inproc, pooled: true)
        brokered.append(try measureInFlight(
            "broker, \(settings.inFlight) in flight, pool of \(settings.workers) \(inproc ? "inproc" : "tcp")",
            endpoint: pooled.endpoint, context: clientContext))
        pooled.stop()
    }

    if runs.contains(.local) {
        let context = try Context(ioThreads: 1)
        let broker = try Broker(endpoints: ["tcp://127.0.0.1:*"], configuration: BrokerConfiguration(
            localServices: [LocalService(name: "echo") { body, _ in body }]), context: context)
        let thread = ServiceThread(broker, name: "broker")
        brokered.append(try measureInFlight("broker, \(settings.inFlight) in flight, local service",
                                            endpoint: try broker.waitUntilBound()[0], context: clientContext))
        thread.stop()
    }

    let reference = runs.contains(.reference) ? try directEchoReference(context: clientContext) { echoEndpoint in
        try measureInFlight("reference: \(settings.inFlight) in flight, no broker", endpoint: echoEndpoint, context: clientContext)
    } : nil

    print("Majordomo echo: clients over loopback TCP, \(settings.bodyBytes)-byte bodies, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    for measurement in measurements + brokered + (reference.map { [$0] } ?? []) { print(measurement.line) }
    for measurement in brokered {
        let versusReference = reference.map { String(format: "%.2f× the reference without broker, ", measurement.requestsPerSecond / $0.requestsPerSecond) } ?? ""
        print(String(format: "%@: %@%.1f× the guide's C broker at 12 000 req/s (goal ≥ 5×)",
                     measurement.name, versusReference, measurement.requestsPerSecond / 12_000))
    }
} catch {
    fail("\(error)")
}
