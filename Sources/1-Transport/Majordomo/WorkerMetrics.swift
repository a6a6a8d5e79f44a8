import LyceumSupport
import Telemetry

/// A worker pool's series in the process's metrics: the reconnection back-off at each broker,
/// which grows while a broker keeps refusing or losing the pool's sessions. Owned by the pool's thread.
final class WorkerMetrics {
    private var backoffs: [String: Gauge] = [:]

    /// A session at `broker` was lost and reconnects after `delay`.
    func reconnecting(to broker: String, after delay: Duration) {
        backoff(broker).record(delay.seconds)
    }

    /// A session at `broker` was accepted: no back-off there now.
    func accepted(by broker: String) { backoff(broker).record(0) }

    private func backoff(_ broker: String) -> Gauge {
        if let known = backoffs[broker] { return known }
        let made = Gauge(label: "lyceum_worker_reconnect_backoff_seconds", dimensions: [("broker", broker)])
        backoffs[broker] = made
        return made
    }
}
