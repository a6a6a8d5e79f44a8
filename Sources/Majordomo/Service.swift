import Foundation

/// A long-running part of a process (a broker, a worker session) that its owner starts and
/// stops uniformly.
///
/// `run()` blocks the calling thread until the service stops, by itself or after
/// `shutdown()`; `shutdown()` may be called from any thread, any number of times, and
/// returns at once. A shut-down service finishes what it has in hand and never hangs.
public protocol Service: AnyObject, Sendable {
    /// Runs the service on the calling thread until it stops.
    func run() throws
    /// Asks the service to stop in an orderly way; `run()` then returns.
    func shutdown()
}

/// A service running on a thread of its own, so that one process can run several.
public final class ServiceThread: Sendable {
    /// The service this thread runs.
    public let service: any Service
    private let finished = DispatchSemaphore(value: 0)
    private let outcome = Locked<(any Error)?>(nil)

    /// Starts `service.run()` on a new thread named `name`.
    public init(_ service: any Service, name: String) {
        self.service = service
        // Foundation may keep a finished thread's closure; it must not keep the service (and
        // so its context, whose termination delivers the last messages) alive with it.
        let running = Locked<(any Service)?>(service)
        let thread = Thread { [running, finished, outcome] in
            do {
                try running.withLock { $0 }?.run()
            } catch {
                outcome.withLock { $0 = error }
            }
            running.withLock { $0 = nil }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Asks the service to stop and waits until its `run()` has returned.
    /// - Returns: the error `run()` ended with, if any.
    @discardableResult
    public func stop() -> (any Error)? {
        service.shutdown()
        return join()
    }

    /// Waits until the service's `run()` has returned.
    /// - Returns: the error `run()` ended with, if any.
    @discardableResult
    public func join() -> (any Error)? {
        finished.wait()
        finished.signal()
        return outcome.withLock { $0 }
    }
}
