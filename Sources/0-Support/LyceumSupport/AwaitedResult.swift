import Dispatch
import Synchronization

/// A result that one thread settles once and any number of threads wait for, with a time
/// limit: how a server's `run()` tells `waitUntilBound` callers which endpoints it bound, or
/// why it could not.
public final class AwaitedResult<Success: Sendable, Failure: Error>: Sendable {
    private let result = Mutex<Result<Success, Failure>?>(nil)
    private let settled = DispatchSemaphore(value: 0)

    /// An unsettled result.
    public init() {}

    /// Records `outcome` and wakes every waiter; only the first call counts.
    public func settle(_ outcome: Result<Success, Failure>) {
        let first = result.withLock { stored in
            guard stored == nil else { return false }
            stored = outcome
            return true
        }
        if first { settled.signal() }
    }

    /// The settled result, waiting up to `timeout` for it; `nil` if it was not settled in time.
    public func wait(timeout: Duration) -> Result<Success, Failure>? {
        let milliseconds = Int(clamping: timeout.millisecondsRoundedUp)
        guard settled.wait(timeout: .now() + .milliseconds(max(0, milliseconds))) == .success else { return nil }
        // Passed on, so that the next waiter (and every later one) returns at once.
        settled.signal()
        return result.withLock { $0 }
    }
}
