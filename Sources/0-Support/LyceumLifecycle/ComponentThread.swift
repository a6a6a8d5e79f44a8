import Foundation
import LyceumSupport
import Synchronization

/// A component running on a thread of its own, so that one process can run several.
public final class ComponentThread: Sendable {
    /// The thread's name, for logs.
    public let name: String
    /// The component, until its `run()` has returned. Nothing here holds it afterwards: Foundation
    /// may keep a finished thread's closure, and with it this object, past ``join()``, and the
    /// component must not live on with it, since its release is what terminates its ZeroMQ context
    /// and so delivers the last messages (a worker's DISCONNECT) before the process exits.
    private let running: Mutex<(any Component)?>
    /// Whether `run()` has returned, and the error it threw, if any.
    private let outcome = Monitor<(finished: Bool, error: (any Error)?)>((false, nil))

    /// Starts `component.run()` on a new thread named `name`; `onExit` is called on that thread
    /// when `run()` returns, with the error it threw, if any.
    public init(_ component: any Component, name: String, onExit: @escaping @Sendable ((any Error)?) -> Void = { _ in }) {
        self.name = name
        running = Mutex(component)
        let thread = Thread { [self] in
            Thread.nameCurrent(name)
            var failure: (any Error)?
            do {
                try running.withLock { $0 }?.run()
            } catch {
                failure = error
            }
            // Released here, before join() returns, rather than whenever Foundation lets the closure go.
            running.withLock { $0 = nil }
            outcome.update { $0 = (true, failure) }
            onExit(failure)
        }
        thread.start()
    }

    /// Whether the component's `run()` has returned.
    public var hasFinished: Bool { running.withLock { $0 == nil } }

    /// Asks the component to stop, without waiting for it.
    public func shutdown() {
        running.withLock { $0 }?.shutdown()
    }

    /// Asks the component to stop and waits until its `run()` has returned.
    /// - Returns: the error `run()` ended with, if any.
    @discardableResult
    public func stop() -> (any Error)? {
        shutdown()
        return join()
    }

    /// Waits until the component's `run()` has returned.
    /// - Returns: the error `run()` ended with, if any.
    @discardableResult
    public func join() -> (any Error)? {
        outcome.wait(until: \.finished) { outcome, _ in outcome.error }
    }
}
