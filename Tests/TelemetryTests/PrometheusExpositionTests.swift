import Foundation
import LyceumTestSupport
import Telemetry
import Testing

/// The Prometheus backend's promises, read back by an independent parser (prometheus_client, run
/// by Debian's Python): what was recorded is what a scraper reads, in the format it expects.
@Suite struct PrometheusExpositionTests {
    static let buckets = [0.001, 0.01, 0.1, 1]

    /// What prometheus_client makes of `metrics`' exposition.
    static func parsed(_ metrics: PrometheusMetrics) throws -> (families: [String: [String]], samples: [(name: String, labels: [String: String], value: Double)]) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/metrics.txt"
        try metrics.exposition().write(toFile: file, atomically: true, encoding: .utf8)
        let result = try Python.run("parse_exposition.py", [file])
        try #require(result.status == 0, "prometheus_client could not parse:\n\(metrics.exposition())\n\(result.stderr)")
        let object = try parse(Array(result.stdout.utf8))
        let samples = (object["samples"] as? [[Any]] ?? []).map { sample in
            (name: sample[0] as? String ?? "", labels: sample[1] as? [String: String] ?? [:], value: (sample[2] as? NSNumber)?.doubleValue ?? .nan)
        }
        return (object["families"] as? [String: [String]] ?? [:], samples)
    }

    static func value(_ samples: [(name: String, labels: [String: String], value: Double)], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The cumulative count of histogram `name`'s bucket whose bound is `bound` (`+Inf`: `.infinity`).
    static func bucket(_ samples: [(name: String, labels: [String: String], value: Double)], _ name: String, _ bound: Double) -> Double? {
        samples.first { $0.name == name + "_bucket" && $0.labels["le"].flatMap { $0 == "+Inf" ? .infinity : Double($0) } == bound }?.value
    }

    @Test func countersGaugesAndHistogramsReadBackAsRecorded() throws {
        let metrics = PrometheusMetrics(describing: [
            MetricDescription("lyceum_requests_total", .counter, "Requests answered."),
            MetricDescription("lyceum_queue_depth", .gauge, "Requests waiting."),
            MetricDescription("lyceum_request_seconds", .histogram, "Time to answer."),
            MetricDescription("lyceum_reply_bytes", .histogram, "Reply sizes."),
        ], buckets: Self.buckets)
        let books = [("service", "books")]
        Counter(label: "lyceum_requests_total", dimensions: books, factory: metrics).increment(by: 41)
        // The same label and dimensions are the same series.
        Counter(label: "lyceum_requests_total", dimensions: books, factory: metrics).increment()
        Counter(label: "lyceum_requests_total", dimensions: [("service", "catalog")], factory: metrics).increment(by: 3)
        let gauge = Gauge(label: "lyceum_queue_depth", factory: metrics)
        gauge.record(7)
        gauge.record(2.5)
        let timer = Timer(label: "lyceum_request_seconds", factory: metrics)
        timer.record(.microseconds(500))
        timer.record(.milliseconds(50))
        timer.record(.seconds(5))
        let sizes = Recorder(label: "lyceum_reply_bytes", aggregate: true, factory: metrics)
        sizes.record(0.5)

        let (families, samples) = try Self.parsed(metrics)
        #expect(families["lyceum_requests"] == ["counter", "Requests answered."], "\(families)")
        #expect(families["lyceum_queue_depth"] == ["gauge", "Requests waiting."])
        #expect(families["lyceum_request_seconds"]?.first == "histogram")
        #expect(Self.value(samples, "lyceum_requests_total", ["service": "books"]) == 42)
        #expect(Self.value(samples, "lyceum_requests_total", ["service": "catalog"]) == 3)
        #expect(Self.value(samples, "lyceum_queue_depth") == 2.5, "a gauge is its last value")
        // Timers in seconds, buckets cumulative, +Inf the count.
        #expect(Self.bucket(samples, "lyceum_request_seconds", 0.001) == 1)
        #expect(Self.bucket(samples, "lyceum_request_seconds", 0.01) == 1)
        #expect(Self.bucket(samples, "lyceum_request_seconds", 0.1) == 2)
        #expect(Self.bucket(samples, "lyceum_request_seconds", 1.0) == 2)
        #expect(Self.bucket(samples, "lyceum_request_seconds", .infinity) == 3)
        #expect(Self.value(samples, "lyceum_request_seconds_count") == 3)
        let sum = try #require(Self.value(samples, "lyceum_request_seconds_sum"))
        #expect(abs(sum - 5.0505) < 1e-9, "\(sum)")
        #expect(Self.bucket(samples, "lyceum_reply_bytes", 1.0) == 1)
    }

    @Test func describedFamiliesComeFirstEvenEmptyThenOthersAlphabetically() throws {
        let metrics = PrometheusMetrics(describing: [
            MetricDescription("lyceum_zeta_total", .counter, "Described first although last in the alphabet."),
            MetricDescription("lyceum_never_total", .counter, "Described, never incremented."),
        ], buckets: Self.buckets)
        Counter(label: "lyceum_b_total", factory: metrics).increment()
        Counter(label: "lyceum_a_total", factory: metrics).increment()
        Counter(label: "lyceum_zeta_total", factory: metrics).increment()
        let names = metrics.exposition().split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(names == ["lyceum_zeta_total", "lyceum_never_total", "lyceum_a_total", "lyceum_b_total"])
        let (families, _) = try Self.parsed(metrics)
        #expect(families["lyceum_never"]?.first == "counter", "an empty described family still parses: \(families)")
    }

    @Test func labelValuesWithQuotesBackslashesAndNewlinesReadBackUnchanged() throws {
        let metrics = PrometheusMetrics(describing: [], buckets: Self.buckets)
        let awkward = "a \"quoted\" C:\\path\nand a second line"
        Counter(label: "lyceum_awkward_total", dimensions: [("name", awkward)], factory: metrics).increment(by: 2)
        let (_, samples) = try Self.parsed(metrics)
        #expect(Self.value(samples, "lyceum_awkward_total", ["name": awkward]) == 2, "\(samples)")
    }

    @Test func forgottenSeriesAreNoLongerRenderedAndStartAfreshWhenMadeAgain() throws {
        let metrics = PrometheusMetrics(describing: [MetricDescription("lyceum_journal_appends_total", .counter, "Appends.")], buckets: Self.buckets)
        let moved = [("service", "books"), ("partition", "3")]
        let kept = [("service", "books"), ("partition", "4")]
        Counter(label: "lyceum_journal_appends_total", dimensions: moved, factory: metrics).increment(by: 10)
        Counter(label: "lyceum_journal_appends_total", dimensions: kept, factory: metrics).increment(by: 20)
        metrics.forgetSeries(matching: [("partition", "3")])
        var (_, samples) = try Self.parsed(metrics)
        #expect(Self.value(samples, "lyceum_journal_appends_total", ["service": "books", "partition": "3"]) == nil)
        #expect(Self.value(samples, "lyceum_journal_appends_total", ["service": "books", "partition": "4"]) == 20)
        Counter(label: "lyceum_journal_appends_total", dimensions: moved, factory: metrics).increment()
        (_, samples) = try Self.parsed(metrics)
        #expect(Self.value(samples, "lyceum_journal_appends_total", ["service": "books", "partition": "3"]) == 1)
    }
}
