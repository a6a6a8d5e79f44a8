import LearningServices
import LyceumServer
@testable import ServiceHosting
import Telemetry
import Testing

/// Cached handles must count into the same series that making them per request did.
@Suite struct RequestMetricsTests {
    @Test func countsEveryRequestIntoItsSeriesAcrossCopies() {
        let backend = PrometheusMetrics(describing: [], buckets: RequestMetrics.latencyBuckets)
        let metrics = RequestMetrics(factory: backend)
        let copy = metrics
        let found = HandledRequest<Never>(reply: [], op: "get")
        let missing = HandledRequest<Never>(reply: [], op: "get", errorCode: .notFound)
        let madeUp = HandledRequest<Never>(reply: [], op: "no-such-op", errorCode: .unknownOp)
        for _ in 0..<3 { metrics.record(found, service: "books", elapsed: .microseconds(50)) }
        copy.record(missing, service: "books", elapsed: .milliseconds(3))
        copy.record(madeUp, service: "books", elapsed: .microseconds(10))
        metrics.record(madeUp, service: "progress", elapsed: .microseconds(10))
        let text = backend.exposition()
        #expect(text.contains(#"lyceum_requests_total{service="books",op="get"} 4"#))
        #expect(text.contains(#"lyceum_requests_total{service="books",op="invalid"} 1"#))
        #expect(text.contains(#"lyceum_requests_total{service="progress",op="invalid"} 1"#))
        #expect(text.contains(#"lyceum_request_errors_total{service="books",code="not_found"} 1"#))
        #expect(text.contains(#"lyceum_request_errors_total{service="books",code="unknown_op"} 1"#))
        #expect(text.contains(#"lyceum_request_duration_seconds_count{service="books",op="get"} 4"#))
        #expect(!text.contains("no-such-op"))
    }

    @Test func countsAForbiddenRequestUnderItsOperationAndCode() {
        let backend = PrometheusMetrics(describing: [], buckets: RequestMetrics.latencyBuckets)
        let forbidden = HandledRequest<Never>(reply: [], op: "list", errorCode: .forbidden)
        RequestMetrics(factory: backend).record(forbidden, service: "books", elapsed: .microseconds(20))
        let text = backend.exposition()
        #expect(text.contains(#"lyceum_requests_total{service="books",op="list"} 1"#))
        #expect(text.contains(#"lyceum_request_errors_total{service="books",code="forbidden"} 1"#))
    }
}
