/// A long-running part of a process (a broker, a worker session, a publisher) that its owner
/// starts and stops uniformly.
///
/// `run()` blocks the calling thread until the component stops, by itself or after
/// `shutdown()`; `shutdown()` may be called from any thread, any number of times, before or
/// during `run()`, and returns at once. A shut-down component finishes what it has in hand and
/// never hangs.
public protocol Component: AnyObject, Sendable {
    /// Runs the component on the calling thread until it stops.
    func run() throws
    /// Asks the component to stop in an orderly way; `run()` then returns.
    func shutdown()
}

/// A component that other components depend on being ready (bound, listening) before they start:
/// ``ComponentGroup`` waits for it before starting the components after it.
public protocol ReadinessReporting: Component {
    /// Returns once the component is ready, or throws why it cannot become ready (or did not
    /// within `timeout`).
    func waitUntilReady(timeout: Duration) throws
}
