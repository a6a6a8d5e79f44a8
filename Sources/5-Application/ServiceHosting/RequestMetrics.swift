import LearningServices
import LyceumLogging
import LyceumSupport
import Synchronization
import Telemetry

/// Counts the requests a process's services handled, from what each service reported
/// (`HandledRequest`): per service and operation a count and a latency histogram, per service
/// and error code a count; pushed to the process's metrics. With debug logging on, one line per
/// request. Safe to use from every thread.
public struct RequestMetrics: Sendable {
    /// Upper bounds, in seconds, of the latency histogram's buckets (`+Inf` is implied).
    public static let latencyBuckets: [Double] = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
    /// The most (service, operation, code) combinations whose metric handles are kept; label
    /// values are bounded (services are registered, unknown ops count as `invalid`, codes are an
    /// enum), so this only guards against a future label that is not. Beyond it, handles are
    /// made per request as before, with the same series.
    static let maximumCachedSeries = 256

    private let factory: any MetricsFactory
    private let logger = Logger(component: "request")
    /// The handles made so far: looking one up is cheaper than asking the factory per request,
    /// which builds the dimensions and finds the series under its own lock.
    private let handles = HandleCache()

    /// Counts reported to `factory` (the process's, by default).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
    }

    /// Records one request to `service` that took `elapsed`.
    public func record<Event>(_ handled: HandledRequest<Event>, service: String, elapsed: Duration) {
        let key = SeriesKey(op: handled.operationLabel, code: handled.errorCode?.rawValue, service: service)
        let series = handles.entries.withLock { cached in
            // Found by comparing, not hashing: a process serves a few dozen combinations, and
            // labels are short, so each comparison is of inline bytes; hashing the key cost
            // about 600 instructions a request (issue 26).
            if let known = cached.first(where: { $0.key == key }) { return known.handles }
            let made = Handles(key, factory: factory)
            if cached.count < Self.maximumCachedSeries { cached.append((key, made)) }
            return made
        }
        series.requests.increment()
        series.duration.record(elapsed)
        series.errors?.increment()
        if logger.isEnabled(.debug) {
            logger.debug("request", [
                "service": service, "op": PeerText.excerpt(handled.op ?? ""), "request_id": PeerText.excerpt(handled.requestID ?? ""),
                "latency_us": String(elapsed.microseconds),
                "code": handled.errorCode?.rawValue ?? "ok",
            ])
        }
    }

    /// The handles by labels, shared by the copies of one `RequestMetrics`.
    private final class HandleCache: Sendable {
        let entries = Mutex<[(key: SeriesKey, handles: Handles)]>([])
    }

    /// The labels one request's metrics carry.
    private struct SeriesKey: Equatable {
        // Compared in this order: the operation tells most entries apart.
        let op: String
        let code: String?
        let service: String
    }

    /// The metrics of one (service, operation, code) combination.
    private struct Handles: Sendable {
        let requests: Counter
        let duration: Timer
        /// The error counter; `nil` for successes.
        let errors: Counter?

        init(_ key: SeriesKey, factory: any MetricsFactory) {
            let dimensions = [("service", key.service), ("op", key.op)]
            requests = Counter(label: "lyceum_requests_total", dimensions: dimensions, factory: factory)
            duration = Timer(label: "lyceum_request_duration_seconds", dimensions: dimensions, factory: factory)
            errors = key.code.map { Counter(label: "lyceum_request_errors_total", dimensions: [("service", key.service), ("code", $0)], factory: factory) }
        }
    }
}
