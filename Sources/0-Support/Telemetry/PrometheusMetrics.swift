import Synchronization

/// A `MetricsFactory` that keeps every series in memory and renders them as the Prometheus text
/// exposition (format 0.0.4). Counters and gauges are one lock each; timers and aggregating
/// recorders are histograms over `buckets` (timers in seconds). Making the same label and
/// dimensions again returns the same series.
public final class PrometheusMetrics: MetricsFactory {
    /// Upper bounds of the histograms' buckets (`+Inf` is implied); for timers, in seconds.
    public let buckets: [Double]
    private let descriptions: [MetricDescription]
    private let series = Mutex<[SeriesKey: any RenderedSeries]>([:])

    /// A backend rendering the families `descriptions` (in that order, each with its `# HELP`
    /// and `# TYPE`, even before a sample exists), then any other family made, alphabetically.
    public init(describing descriptions: [MetricDescription], buckets: [Double]) {
        self.descriptions = descriptions
        self.buckets = buckets
    }

    /// See `MetricsFactory`.
    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        handler(label, dimensions) { CounterSeries() }
    }

    /// See `MetricsFactory`.
    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        aggregate ? handler(label, dimensions) { HistogramSeries(buckets: buckets, unit: 1) } : handler(label, dimensions) { GaugeSeries() }
    }

    /// See `MetricsFactory`.
    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        handler(label, dimensions) { HistogramSeries(buckets: buckets, unit: 1e-9) }
    }

    /// The series `label` with `dimensions`, made by `make` the first time. A label made once
    /// as one kind and again as another (a programming error) gets a fresh, unrendered series.
    private func handler<Series: RenderedSeries>(_ label: String, _ dimensions: [(String, String)], _ make: () -> Series) -> Series {
        let key = SeriesKey(label: label, dimensions: dimensions.map { Dimension(name: $0.0, value: $0.1) })
        return series.withLock { series in
            if let existing = series[key] as? Series { return existing }
            let made = make()
            if series[key] == nil { series[key] = made }
            return made
        }
    }

    /// Stops rendering every series whose labels include all of `dimensions`: what a resource
    /// that is gone reported (a partition's journal that moved to another process), so that the
    /// exposition no longer shows it as this process's. Handlers still held keep working,
    /// unrendered; making the series again starts it afresh (a counter from zero, which
    /// Prometheus takes as a reset).
    public func forgetSeries(matching dimensions: [(String, String)]) {
        let wanted = dimensions.map { Dimension(name: $0.0, value: $0.1) }
        series.withLock { series in
            series = series.filter { key, _ in !wanted.allSatisfy { key.dimensions.contains($0) } }
        }
    }

    /// Every family described, then every other one, with its samples in label order.
    public func exposition() -> String {
        let all = series.withLock { $0 }
        var byFamily: [String: [(SeriesKey, any RenderedSeries)]] = [:]
        for (key, value) in all { byFamily[key.label, default: []].append((key, value)) }
        var text = PrometheusText()
        let described = Set(descriptions.map(\.name))
        let others = byFamily.keys.filter { !described.contains($0) }.sorted()
        for description in descriptions {
            text.family(description.name, description.kind.rawValue, description.help)
            renderSamples(byFamily[description.name] ?? [], into: &text)
        }
        for name in others {
            text.family(name, byFamily[name]?.first?.1.kind.rawValue ?? "untyped", name)
            renderSamples(byFamily[name] ?? [], into: &text)
        }
        return text.output
    }

    private func renderSamples(_ samples: [(SeriesKey, any RenderedSeries)], into text: inout PrometheusText) {
        for (key, value) in samples.sorted(by: { $0.0 < $1.0 }) {
            value.render(name: key.label, labels: key.dimensions.map { ($0.name, $0.value) }, into: &text)
        }
    }
}

/// One label name and value.
struct Dimension: Hashable, Comparable {
    var name: String
    var value: String

    static func < (lhs: Dimension, rhs: Dimension) -> Bool { (lhs.name, lhs.value) < (rhs.name, rhs.value) }
}

/// A family's name and one series' labels.
struct SeriesKey: Hashable, Comparable {
    var label: String
    var dimensions: [Dimension]

    static func < (lhs: SeriesKey, rhs: SeriesKey) -> Bool {
        lhs.label != rhs.label ? lhs.label < rhs.label : lhs.dimensions.lexicographicallyPrecedes(rhs.dimensions)
    }
}
