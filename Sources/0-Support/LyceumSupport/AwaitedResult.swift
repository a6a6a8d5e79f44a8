/// A result that one thread settles once and any number of threads wait for, with a time
/// limit or without: how a server's `run()` tells `waitUntilBound` callers which endpoints it
/// bound, or why it could not, and how a caller waits for a callback's value.
public final class AwaitedResult<Success: Sendable, Failure: Error>: Sendable {
    private let result = Monitor<Result<Success, Failure>?>(nil)

    /// An unsettled result.
    public init() {}

    /// Records `outcome` and wakes every waiter; only the first call counts.
    public func settle(_ outcome: Result<Success, Failure>) {
        result.update { stored in
            if stored == nil { stored = outcome }
        }
    }

    /// The settled result, waiting up to `timeout` for it; `nil` if it was not settled in time.
    public func wait(timeout: Duration) -> Result<Success, Failure>? {
        result.wait(until: { $0 != nil }, deadline: .now + timeout) { stored, _ in stored }
    }

    /// The settled result, waiting for it as long as it takes.
    public func wait() -> Result<Success, Failure> {
        // Without a deadline the wait returns only once the result is settled, and it is never unset.
        result.wait(until: { $0 != nil }) { stored, _ in stored }!
    }
}
