#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a lock whose waiters sleep in the kernel, and the one way a thread waits for
/// another thread to change shared state: Lyceum's one condition primitive. Shared state that no
/// thread waits on sits behind `Synchronization.Mutex` (or in an `Atomic`); state a thread sleeps
/// on until another changes it (a result settled, a queue filled, a stop asked for, a batch
/// synced) sits here, so that the check and the sleep happen under one lock and no wake-up is lost.
///
/// Its lock never spins, which also makes it the lock of a value that many threads contend for on
/// a hot path: measured with 4–64 writer threads on 2 cores, `Mutex` (which spins before sleeping)
/// gave a service's writes 2.5–3× fewer per second, since a spinning waiter burns the core the
/// holder needs (`LearningServices`' `ServiceCore`).
public final class Monitor<State>: @unchecked Sendable {
    // `state` is only touched while `mutex` is held; `condition` is waited on with it.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    /// A monitor of `state`.
    public init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Deadlines are counted on the monotonic clock, which no change of the wall clock moves.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state, waking no waiter: for reads, and for
    /// changes no thread waits for.
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Runs `body` with exclusive access to the state, then wakes every waiter to check its condition again.
    public func update<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Sleeps until `ready` holds of the state, or until `deadline` when one is given, then runs
    /// `body` under the same lock, told whether `ready` holds. No waiter is woken: for a `body`
    /// that reads, or changes nothing another thread waits for.
    public func wait<Result>(
        until ready: (State) -> Bool, deadline: ContinuousClock.Instant? = nil, then body: (inout State, _ isReady: Bool) -> Result
    ) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&state, sleep(until: ready, deadline: deadline))
    }

    /// Sleeps until `ready` holds of the state (or until `deadline`), runs `body` under the same
    /// lock, told whether `ready` holds, then wakes every waiter to check its condition again:
    /// for a `body` that changes what others wait for (takes a queue's item, marks a thread finished).
    public func update<Result>(
        when ready: (State) -> Bool, deadline: ContinuousClock.Instant? = nil, _ body: (inout State, _ isReady: Bool) -> Result
    ) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return body(&state, sleep(until: ready, deadline: deadline))
    }

    /// Sleeps until `ready` holds of the state, or until `deadline` when one is given.
    /// - Returns: whether `ready` holds; `false` only when the deadline passed first.
    @discardableResult
    public func wait(until ready: (State) -> Bool, deadline: ContinuousClock.Instant? = nil) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return sleep(until: ready, deadline: deadline)
    }

    /// Sleeps, the lock held, until `ready` holds or `deadline` passes; whether `ready` holds.
    private func sleep(until ready: (State) -> Bool, deadline: ContinuousClock.Instant?) -> Bool {
        while !ready(state) {
            guard let deadline else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            let remaining = deadline - .now
            guard remaining > .zero else { return false }
            var limit = Self.monotonicTime(after: remaining)
            // A timeout, or a wake-up: either way the loop checks `ready` and the time again.
            _ = pthread_cond_timedwait(condition, mutex, &limit)
        }
        return true
    }

    /// The monotonic clock's reading `interval` from now, as `pthread_cond_timedwait` takes it.
    private static func monotonicTime(after interval: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = interval.components
        // A day at most per sleep: the loop sleeps again for what is left, and no sum overflows.
        let wholeSeconds = Int(min(seconds, 86_400))
        let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        return timespec(tv_sec: now.tv_sec + wholeSeconds + nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    }
}
