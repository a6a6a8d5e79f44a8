// The façade's public API, shaped like swift-metrics' `CoreMetrics` (`Counter`, `Gauge`,
// `Recorder`, `Timer`, `MetricsFactory`, `MetricsSystem.bootstrap`), so that moving to
// swift-metrics is this one file: replace it with `@_exported import Metrics` and conform the
// backend (`PrometheusMetrics`) to swift-metrics' `MetricsFactory`.
import LyceumSupport

/// Receives a counter's increments; what a backend makes for `Counter`.
public protocol CounterHandler: AnyObject, Sendable {
    /// Adds `amount` to the counter.
    func increment(by amount: Int64)
    /// Sets the counter back to zero.
    func reset()
}

/// Receives a recorder's values; what a backend makes for `Recorder` and `Gauge`.
public protocol RecorderHandler: AnyObject, Sendable {
    /// Records `value`.
    func record(_ value: Int64)
    /// Records `value`.
    func record(_ value: Double)
}

/// Receives a timer's durations; what a backend makes for `Timer`.
public protocol TimerHandler: AnyObject, Sendable {
    /// Records a duration of `duration` nanoseconds.
    func recordNanoseconds(_ duration: Int64)
}

/// Makes the handlers behind the metric types; a process installs one with
/// `MetricsSystem.bootstrap(_:)`. `dimensions` are label names and values, in order.
public protocol MetricsFactory: Sendable {
    /// The handler of a counter.
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler
    /// The handler of a recorder; `aggregate` false makes a gauge (the last value counts).
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler
    /// The handler of a timer.
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler
}

/// A monotonically increasing count, such as requests handled.
public struct Counter: Sendable {
    /// The counter's name.
    public let label: String
    /// Its label names and values.
    public let dimensions: [(String, String)]
    private let handler: any CounterHandler

    /// The counter `label` with `dimensions`, made by `factory` (the bootstrapped one by default).
    /// Creating the same label and dimensions twice gives the same series.
    public init(label: String, dimensions: [(String, String)] = [], factory: any MetricsFactory = MetricsSystem.factory) {
        self.label = label
        self.dimensions = dimensions
        handler = factory.makeCounter(label: label, dimensions: dimensions)
    }

    /// Adds `amount`.
    public func increment<Amount: BinaryInteger>(by amount: Amount) {
        handler.increment(by: Int64(clamping: amount))
    }

    /// Adds one.
    public func increment() { handler.increment(by: 1) }
}

/// Records values: aggregated into a distribution, or (as a `Gauge`) keeping the last one.
public struct Recorder: Sendable {
    /// The recorder's name.
    public let label: String
    /// Its label names and values.
    public let dimensions: [(String, String)]
    private let handler: any RecorderHandler

    /// The recorder `label` with `dimensions`; `aggregate` false keeps only the last value.
    public init(
        label: String, dimensions: [(String, String)] = [], aggregate: Bool = true, factory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.label = label
        self.dimensions = dimensions
        handler = factory.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    /// Records `value`.
    public func record<Value: BinaryInteger>(_ value: Value) { handler.record(Int64(clamping: value)) }
    /// Records `value`.
    public func record(_ value: Double) { handler.record(value) }
}

/// A value that goes up and down, such as a queue's depth: a `Recorder` keeping the last value.
public struct Gauge: Sendable {
    private let recorder: Recorder

    /// The gauge `label` with `dimensions`.
    public init(label: String, dimensions: [(String, String)] = [], factory: any MetricsFactory = MetricsSystem.factory) {
        recorder = Recorder(label: label, dimensions: dimensions, aggregate: false, factory: factory)
    }

    /// Sets the gauge to `value`.
    public func record<Value: BinaryInteger>(_ value: Value) { recorder.record(value) }
    /// Sets the gauge to `value`.
    public func record(_ value: Double) { recorder.record(value) }
}

/// Durations, such as the time to answer a request.
public struct Timer: Sendable {
    /// The timer's name.
    public let label: String
    /// Its label names and values.
    public let dimensions: [(String, String)]
    private let handler: any TimerHandler

    /// The timer `label` with `dimensions`.
    public init(label: String, dimensions: [(String, String)] = [], factory: any MetricsFactory = MetricsSystem.factory) {
        self.label = label
        self.dimensions = dimensions
        handler = factory.makeTimer(label: label, dimensions: dimensions)
    }

    /// Records a duration of `duration` nanoseconds.
    public func recordNanoseconds<Value: BinaryInteger>(_ duration: Value) { handler.recordNanoseconds(Int64(clamping: duration)) }

    /// Records `duration`.
    public func record(_ duration: Duration) {
        recordNanoseconds(duration.nanoseconds)
    }
}

/// The process's one metrics factory. Until `bootstrap(_:)` runs, metrics go nowhere.
public enum MetricsSystem {
    private static let installed = FactoryBox()

    /// Installs `factory` for every metric made afterwards. Call it once, before the subsystems
    /// start; a second call is refused (metrics made meanwhile would report to the old one).
    public static func bootstrap(_ factory: any MetricsFactory) {
        precondition(installed.install(factory), "MetricsSystem.bootstrap was called twice")
    }

    /// The installed factory, or one that discards everything.
    public static var factory: any MetricsFactory { installed.factory }
}
