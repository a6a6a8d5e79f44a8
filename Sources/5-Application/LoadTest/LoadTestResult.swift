import JSON
import LyceumSupport

/// The figures of a finished run, and the forms they are shown in.
public struct LoadTestResult: Sendable {
    /// The run's definition.
    public let configuration: LoadTestConfiguration
    /// Everything measured, every connection merged.
    public let statistics: RunStatistics
    /// From the end of the warm-up to the last measured reply.
    public let measuredDuration: Duration
    /// The CPU time each of ``LoadTestConfiguration/serverProcesses`` used from the end of the
    /// warm-up to the end of the run; empty when none was named or one could not be read.
    public let serverCPU: [ProcessCPU]
    /// Why ``serverCPU`` is empty although processes were named: the process and file that
    /// could not be read at one end of the run.
    public let serverCPUFailure: LoadTestError?

    /// The server processes' CPU time per measured reply, in microseconds; nil when not measured.
    public var serverCPUPerRequest: Double? {
        guard !serverCPU.isEmpty, statistics.completed > 0 else { return nil }
        return Double(serverCPU.reduce(0) { $0 + $1.time.microseconds }) / Double(statistics.completed)
    }

    /// The server processes' context switches (all their threads) per measured reply; nil when
    /// not measured. Wake-ups per request: what batching requests per wake-up brings down.
    public var serverSwitchesPerRequest: (voluntary: Double, involuntary: Double)? {
        guard !serverCPU.isEmpty, statistics.completed > 0 else { return nil }
        let requests = Double(statistics.completed)
        return (Double(serverCPU.reduce(0) { $0 + $1.voluntarySwitches }) / requests,
                Double(serverCPU.reduce(0) { $0 + $1.involuntarySwitches }) / requests)
    }

    /// The percentiles every report lists.
    public static let reportedPercentiles: [(name: String, percentile: Double)] = [
        ("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9),
    ]

    /// Measured replies per second.
    public var throughput: Double {
        let seconds = measuredDuration.seconds
        return seconds > 0 ? Double(statistics.completed) / seconds : 0
    }

    /// The latency, in microseconds, below which `percentile` of the measured requests finished.
    public func latency(atPercentile percentile: Double) -> UInt64 {
        statistics.latency.value(atPercentile: percentile)
    }

    /// `closed, 50 in flight` or `open, 20000 req/s`.
    public var loadDescription: String {
        switch configuration.load {
        case .closed(let inFlight): "closed loop, \(inFlight) in flight"
        case .open(let rate, _): "open loop, \(Self.number(rate)) req/s"
        }
    }

    /// A few lines for a person.
    public func text(label: String) -> String {
        var lines = ["\(label): \(configuration.mix), \(loadDescription), \(configuration.connections) connections, seed \(configuration.seed)\(configuration.verify ? ", verified" : "")"]
        if configuration.mix.includes(any: [.bookList]) { lines.append("  book-list  \(configuration.listing)") }
        lines.append("  requests   \(statistics.completed) in \(Self.number(measuredDuration.seconds, decimals: 2)) s = \(Self.number(throughput)) req/s")
        let figures = Self.reportedPercentiles.map { "\($0.name) \(Self.milliseconds(latency(atPercentile: $0.percentile)))" }
        lines.append("  latency    " + (figures + ["max \(Self.milliseconds(statistics.latency.maximum))"]).joined(separator: "  ") + " ms")
        if case .open = configuration.load {
            lines.append("  send lag   p99 \(Self.milliseconds(statistics.sendLag.value(atPercentile: 99))) ms, max \(Self.milliseconds(statistics.sendLag.maximum)) ms (client behind its schedule; included in latency)")
        }
        if statistics.errors.isEmpty {
            lines.append("  errors     none")
        } else {
            lines.append("  errors     " + statistics.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if let perRequest = serverCPUPerRequest {
            let processes = serverCPU.map { "pid \($0.pid) \(Self.number(Double($0.time.microseconds) / 1000)) ms" }
            lines.append("  server CPU \(Self.number(perRequest, decimals: 1)) µs/request (\(processes.joined(separator: ", ")))")
            if let switches = serverSwitchesPerRequest {
                lines.append("  switches   \(Self.number(switches.voluntary, decimals: 2)) voluntary, \(Self.number(switches.involuntary, decimals: 2)) involuntary context switches/request")
            }
        } else if !configuration.serverProcesses.isEmpty {
            lines.append("  server CPU not measured: " + (serverCPUFailure.map { "\($0)" } ?? "the run ended before its warm-up"))
        }
        for reason in statistics.wrongReplies { lines.append("  wrong reply: \(reason)") }
        return lines.joined(separator: "\n")
    }

    /// The machine-readable form: configuration, throughput, errors, percentiles, the
    /// percentile curve that `lyceum bench plot` draws and the server processes' CPU time.
    public func json(label: String) -> JSONValue {
        var load: JSONValue
        switch configuration.load {
        case .closed(let inFlight): load = ["mode": "closed", "in_flight": .integer(inFlight)]
        case .open(let rate, let maxInFlight): load = ["mode": "open", "rate": .double(rate), "max_in_flight": .integer(maxInFlight)]
        }
        var latencies = JSONObject()
        for (name, percentile) in Self.reportedPercentiles { latencies.append(name, .integer(Int(latency(atPercentile: percentile)))) }
        latencies.append("max", .integer(Int(statistics.latency.maximum)))
        latencies.append("mean", .double(statistics.latency.mean))
        var errors = JSONObject()
        for (code, count) in statistics.errors.sorted(by: { $0.key < $1.key }) { errors.append(code, .integer(count)) }
        let curve = PercentileCurve(label: label, histogram: statistics.latency)
        var result: JSONValue = [
            "label": .string(label),
            "endpoint": .string(configuration.endpoints.joined(separator: ",")),
            "failovers": .integer(statistics.failovers),
            "scenario": .string(configuration.mix.description),
            "load": load,
            "connections": .integer(configuration.connections),
            "seed": .integer(Int(truncatingIfNeeded: configuration.seed)),
            "verify": .bool(configuration.verify),
            "seconds": .double(measuredDuration.seconds),
            "requests": .integer(statistics.completed),
            "requests_per_second": .double(throughput),
            "errors": .object(errors),
            "error_count": .integer(statistics.errorCount),
            "wrong_replies": .array(statistics.wrongReplies.map(JSONValue.string)),
            "latency_us": .object(latencies),
            "send_lag_p99_us": .integer(Int(statistics.sendLag.value(atPercentile: 99))),
            "curve": curve.json,
            "server_cpu": serverCPUJSON,
        ]
        if configuration.mix.includes(any: [.bookList]), case .object(var members) = result {
            let listing = configuration.listing
            members.append("listing", ["sort": .string(listing.sort), "limit": .integer(listing.limit),
                                       "page": listing.page.map { .integer($0) } ?? .null])
            result = .object(members)
        }
        return result
    }

    /// `{"us_per_request": …, "processes_us": {"PID": …}, "context_switches_per_request":
    /// {"voluntary": …, "involuntary": …}}`, or null when not measured.
    private var serverCPUJSON: JSONValue {
        guard let perRequest = serverCPUPerRequest, let switches = serverSwitchesPerRequest else { return .null }
        var processes = JSONObject()
        for process in serverCPU { processes.append(String(process.pid), .double(Double(process.time.microseconds))) }
        return ["us_per_request": .double(perRequest), "processes_us": .object(processes),
                "context_switches_per_request": ["voluntary": .double(switches.voluntary), "involuntary": .double(switches.involuntary)]]
    }

    static func milliseconds(_ microseconds: UInt64) -> String { number(Double(microseconds) / 1000, decimals: 3) }

    static func number(_ value: Double, decimals: Int = 0) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let fraction = String(Int(scaled) - whole * Int(scale))
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return text
    }
}
