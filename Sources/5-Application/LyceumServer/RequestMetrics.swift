import LearningServices
import LyceumLogging
import LyceumSupport
import Telemetry

/// Counts the requests a process's services handled, from what each service reported
/// (`HandledRequest`): per service and operation a count and a latency histogram, per service
/// and error code a count; pushed to the process's metrics. With debug logging on, one line per
/// request. Safe to use from every thread.
public struct RequestMetrics: Sendable {
    /// Upper bounds, in seconds, of the latency histogram's buckets (`+Inf` is implied).
    public static let latencyBuckets: [Double] = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private let factory: any MetricsFactory
    private let logger = Logger(component: "request")

    /// Counts reported to `factory` (the process's, by default).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
    }

    /// Records one request to `service` that took `elapsed`.
    public func record<Event>(_ handled: HandledRequest<Event>, service: String, elapsed: Duration) {
        let op = handled.operationLabel
        let dimensions = [("service", service), ("op", op)]
        Counter(label: "lyceum_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "lyceum_request_duration_seconds", dimensions: dimensions, factory: factory).record(elapsed)
        if let code = handled.errorCode {
            Counter(label: "lyceum_request_errors_total", dimensions: [("service", service), ("code", code.rawValue)], factory: factory).increment()
        }
        if logger.isEnabled(.debug) {
            logger.debug("request", [
                "service": service, "op": PeerText.excerpt(handled.op ?? ""), "request_id": PeerText.excerpt(handled.requestID ?? ""),
                "latency_us": String(elapsed.microseconds),
                "code": handled.errorCode?.rawValue ?? "ok",
            ])
        }
    }
}
