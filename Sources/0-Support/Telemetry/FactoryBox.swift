import Synchronization

/// Holds the process's factory: `MetricsSystem`'s storage, set at most once.
final class FactoryBox: Sendable {
    private let current = Mutex<(factory: any MetricsFactory, installed: Bool)>((DiscardingMetrics(), false))

    /// The factory installed, or the discarding one.
    var factory: any MetricsFactory { current.withLock { $0.factory } }

    /// Installs `factory` unless one was installed; whether it was installed now.
    func install(_ factory: any MetricsFactory) -> Bool {
        current.withLock { current in
            guard !current.installed else { return false }
            current = (factory, true)
            return true
        }
    }
}

/// The factory before `bootstrap`: every handler drops what it is given.
struct DiscardingMetrics: MetricsFactory {
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { Discarding.handler }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { Discarding.handler }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { Discarding.handler }
}

/// One shared handler object (handlers are classes, as in swift-metrics).
private final class Discarding: CounterHandler, RecorderHandler, TimerHandler {
    static let handler = Discarding()
    func increment(by amount: Int64) {}
    func reset() {}
    func record(_ value: Int64) {}
    func record(_ value: Double) {}
    func recordNanoseconds(_ duration: Int64) {}
}
