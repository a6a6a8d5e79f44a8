// mdp-bench: echo round trips through Lyceum's Majordomo broker over loopback TCP.
//
//   1. one synchronous Client, one request at a time;
//   2. one AsyncClient keeping 50 requests in flight over several worker sessions;
//   3. the reference, measured in the same run: the same 50-in-flight echo straight from
//      DEALERs to a ROUTER echo loop, without a broker, i.e. the ceiling libzmq allows here.
//
// Prints requests per second and p50/p99 round-trip latency for each, and the ratios to the
// reference and to the ZeroMQ guide's C broker (about 12 000 round trips/s at best).
//
//   mdp-bench [--seconds S] [--workers N] [--in-flight N] [--body-bytes N]
import Foundation
import Majordomo
import ZeroMQ

struct Settings {
    var seconds = 5.0
    var workers = 4
    var inFlight = 50
    var bodyBytes = 64
    /// Workers reach the broker over `inproc` (sharing its process) or loopback `tcp`.
    var workerTransport = "tcp"

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let name = iterator.next() {
            if name == "--worker-transport" {
                guard let value = iterator.next(), ["tcp", "inproc"].contains(value) else { fail("--worker-transport is tcp or inproc") }
                workerTransport = value
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
let quiet = WorkerConfiguration(logLevel: .warning)

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

do {
    // Broker and clients have contexts, hence I/O threads, of their own, as in separate processes.
    let brokerContext = try Context(ioThreads: 1)
    let context = try Context(ioThreads: 1)
    let broker = try Broker(endpoints: ["tcp://127.0.0.1:*", "inproc://mdp-bench"],
                            configuration: BrokerConfiguration(logLevel: .warning), context: brokerContext)
    let brokerThread = ServiceThread(broker, name: "broker")
    let bound = try broker.waitUntilBound()
    let endpoint = bound[0]
    let workerEndpoint = settings.workerTransport == "inproc" ? bound[1] : endpoint
    let workerContext = settings.workerTransport == "inproc" ? brokerContext : try Context(ioThreads: 1)
    let workers = try (0..<settings.workers).map { index in
        ServiceThread(try WorkerSession(endpoint: workerEndpoint, service: "echo", configuration: quiet, context: workerContext) { $0 },
                      name: "worker-\(index)")
    }
    progress("broker on \(endpoint), \(settings.workers) worker sessions on \(workerEndpoint), \(settings.bodyBytes)-byte bodies, \(settings.seconds) s per run")

    let client = Client(endpoint: endpoint, context: context)
    let synchronous = try measure("broker, 1 synchronous client") { measurement, recording in
        let start = clock.now
        _ = try client.call("echo", body: body)
        if recording { measurement.latencies.append(clock.now - start) }
    }
    client.close()

    let asyncClient = AsyncClient(endpoint: endpoint, capacity: settings.inFlight, context: context)
    var sentAt: [AsyncClient.RequestID: ContinuousClock.Instant] = [:]
    let inFlight = try measure("broker, \(settings.inFlight) in flight, \(settings.workers) workers") { measurement, recording in
        try pipelined(asyncClient, into: &measurement, recording: recording, sentAt: &sentAt)
    }
    while try asyncClient.receive(timeout: .seconds(1)) != nil {}
    asyncClient.close()
    for worker in workers { worker.stop() }
    brokerThread.stop()

    // The reference: the same client straight to a ROUTER that echoes MDP replies, no broker.
    let direct = try Broker.directEchoReference(context: context) { echoEndpoint in
        let reference = AsyncClient(endpoint: echoEndpoint, capacity: settings.inFlight, context: context)
        var referenceSentAt: [AsyncClient.RequestID: ContinuousClock.Instant] = [:]
        defer { reference.close() }
        return try measure("reference: \(settings.inFlight) in flight, no broker") { measurement, recording in
            try pipelined(reference, into: &measurement, recording: recording, sentAt: &referenceSentAt)
        }
    }

    print("Majordomo echo: clients over loopback TCP, workers over \(settings.workerTransport), \(settings.bodyBytes)-byte bodies, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    for measurement in [synchronous, inFlight, direct] { print(measurement.line) }
    print(String(format: "%d in flight vs reference without broker: %.2f×", settings.inFlight, inFlight.requestsPerSecond / direct.requestsPerSecond))
    print(String(format: "%d in flight vs the guide's C broker (12 000 req/s): %.1f× (goal ≥ 5×)", settings.inFlight, inFlight.requestsPerSecond / 12_000))
} catch {
    fail("\(error)")
}
