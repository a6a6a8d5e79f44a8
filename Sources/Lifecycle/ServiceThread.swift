import Foundation
import Synchronization

/// A service running on a thread of its own, so that one process can run several.
public final class ServiceThread: Sendable {
    /// The service this thread runs.
    public let service: any Service
    /// The thread's name, for logs.
    public let name: String
    private let finished = DispatchSemaphore(value: 0)
    private let outcome = Mutex<(any Error)?>(nil)

    /// Starts `service.run()` on a new thread named `name`; `onExit` is called on that thread
    /// when `run()` returns, with the error it threw, if any.
    public init(_ service: any Service, name: String, onExit: @escaping @Sendable ((any Error)?) -> Void = { _ in }) {
        self.service = service
        self.name = name
        // Foundation may keep a finished thread's closure; it must not keep the service (and
        // so its context, whose termination delivers the last messages) alive with it.
        let running = Mutex<(any Service)?>(service)
        let thread = Thread { [self] in
            Thread.nameCurrent(name)
            var failure: (any Error)?
            do {
                try running.withLock { $0 }?.run()
            } catch {
                failure = error
            }
            running.withLock { $0 = nil }
            outcome.withLock { $0 = failure }
            finished.signal()
            onExit(failure)
        }
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
