import Synchronization

/// A series the Prometheus backend holds and can render.
protocol RenderedSeries: AnyObject, Sendable {
    /// The family type it renders as.
    var kind: MetricDescription.Kind { get }
    /// Appends its samples for `name` with `labels`.
    func render(name: String, labels: [(String, String)], into text: inout PrometheusText)
}

/// A counter: a total that only grows (until reset).
final class CounterSeries: CounterHandler, RenderedSeries {
    private let total = Atomic<Int64>(0)
    var kind: MetricDescription.Kind { .counter }

    func increment(by amount: Int64) { total.wrappingAdd(max(amount, 0), ordering: .relaxed) }
    func reset() { total.store(0, ordering: .relaxed) }

    func render(name: String, labels: [(String, String)], into text: inout PrometheusText) {
        text.sample(name, labels, Double(total.load(ordering: .relaxed)))
    }
}

/// A gauge: the last value recorded.
final class GaugeSeries: RecorderHandler, RenderedSeries {
    private let bits = Atomic<UInt64>(0)
    var kind: MetricDescription.Kind { .gauge }

    func record(_ value: Int64) { record(Double(value)) }
    func record(_ value: Double) { bits.store(value.bitPattern, ordering: .relaxed) }

    func render(name: String, labels: [(String, String)], into text: inout PrometheusText) {
        text.sample(name, labels, Double(bitPattern: bits.load(ordering: .relaxed)))
    }
}

/// A histogram: a count, a sum and per-bucket counts. `unit` converts recorded values (the
/// nanoseconds of a timer) to the exposition's unit (seconds).
final class HistogramSeries: RecorderHandler, TimerHandler, RenderedSeries {
    private struct Counts {
        var count: UInt64 = 0
        var sum: Double = 0
        var buckets: [UInt64]
    }

    private let bounds: [Double]
    private let unit: Double
    private let counts: Mutex<Counts>
    var kind: MetricDescription.Kind { .histogram }

    init(buckets: [Double], unit: Double) {
        bounds = buckets
        self.unit = unit
        counts = Mutex(Counts(buckets: [UInt64](repeating: 0, count: buckets.count)))
    }

    func record(_ value: Int64) { observe(Double(value) * unit) }
    func record(_ value: Double) { observe(value * unit) }
    func recordNanoseconds(_ duration: Int64) { observe(Double(duration) * unit) }

    private func observe(_ value: Double) {
        let bucket = bounds.firstIndex { value <= $0 }
        counts.withLock { counts in
            counts.count += 1
            counts.sum += value
            if let bucket { counts.buckets[bucket] += 1 }
        }
    }

    func render(name: String, labels: [(String, String)], into text: inout PrometheusText) {
        let counts = counts.withLock { $0 }
        var cumulative: UInt64 = 0
        for (bound, count) in zip(bounds, counts.buckets) {
            cumulative += count
            text.sample(name + "_bucket", labels + [("le", PrometheusText.number(bound))], Double(cumulative))
        }
        text.sample(name + "_bucket", labels + [("le", "+Inf")], Double(counts.count))
        text.sample(name + "_sum", labels, counts.sum)
        text.sample(name + "_count", labels, Double(counts.count))
    }
}
