import Dispatch
import Synchronization

/// A bounded queue of jobs and the one thread that runs them, oldest first: where a serving loop
/// sends the requests whose work grows with data it does not bound (a big catalog's search), so
/// that they never hold the loop, and so that together they take at most one core.
///
/// As a component its thread is the one that calls `run()`. It is ``ReadinessReporting`` so that
/// a ``ComponentGroup`` listing it before the loop that submits to it stops it only once that
/// loop has stopped, after the loop's last deferred replies; the jobs still queued then run
/// before `run()` returns. Submitting never waits: a full queue takes nothing.
public final class BoundedWorkQueue: ReadinessReporting {
    /// What ``submit(_:)`` did with a job.
    public enum Submission: Sendable, Equatable {
        /// The job is queued for the thread.
        case queued
        /// ``capacity`` jobs wait already; the job was not taken.
        case full
        /// No thread runs the queue (before `run()`, or after it returned); the job was not taken.
        case notRunning
    }

    /// The queue's thread did not start within `waitUntilReady`'s time.
    public struct NotStarted: Error, CustomStringConvertible {
        /// What was waited for.
        public var description: String { "the work queue's thread did not start in time" }
    }

    private enum Phase {
        case notStarted, running, stopped
    }

    private struct State {
        var phase = Phase.notStarted
        var jobs: [@Sendable () -> Void] = []
        var stopping = false
    }

    /// The most jobs waiting at once, the one running not counted.
    public let capacity: Int
    private let state = Mutex(State())
    /// Signalled once per job queued and once per `shutdown()`: the thread sleeps on it.
    private let wakeups = DispatchSemaphore(value: 0)
    private let started = DispatchSemaphore(value: 0)

    /// An empty queue holding at most `capacity` (at least 1) waiting jobs.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Queues `job` for the thread, without waiting; see ``Submission``.
    public func submit(_ job: @escaping @Sendable () -> Void) -> Submission {
        let submission = state.withLock { state -> Submission in
            guard state.phase == .running else { return .notRunning }
            guard state.jobs.count < capacity else { return .full }
            state.jobs.append(job)
            return .queued
        }
        if submission == .queued { wakeups.signal() }
        return submission
    }

    /// Runs the queued jobs on the calling thread until ``shutdown()``, then the jobs still
    /// queued, and returns; from then on the queue takes no more.
    public func run() throws {
        state.withLock { $0.phase = .running }
        started.signal()
        while let job = nextJob() { job() }
    }

    /// Asks ``run()`` to return once the queue is empty; returns at once.
    public func shutdown() {
        state.withLock { $0.stopping = true }
        wakeups.signal()
    }

    /// Returns once ``run()`` takes jobs; throws ``NotStarted`` after `timeout`.
    public func waitUntilReady(timeout: Duration) throws {
        let (seconds, attoseconds) = timeout.components
        let deadline = DispatchTime.now() + Double(seconds) + Double(attoseconds) * 1e-18
        guard started.wait(timeout: deadline) == .success else { throw NotStarted() }
        // Passed on, so that every later waiter returns at once.
        started.signal()
    }

    /// The oldest job, waiting for one; `nil` once shut down with none left.
    private func nextJob() -> (@Sendable () -> Void)? {
        while true {
            wakeups.wait()
            // One signal per job and per shutdown, each job queued before its signal: a wake-up
            // finds a job, or the shutdown once every job is taken.
            let (job, stopped) = state.withLock { state -> ((@Sendable () -> Void)?, Bool) in
                if !state.jobs.isEmpty { return (state.jobs.removeFirst(), false) }
                guard state.stopping else { return (nil, false) }
                state.phase = .stopped
                return (nil, true)
            }
            if let job { return job }
            if stopped { return nil }
        }
    }
}
