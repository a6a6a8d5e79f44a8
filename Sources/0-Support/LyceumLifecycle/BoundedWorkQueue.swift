import LyceumSupport

/// A bounded queue of jobs and the one thread that runs them, oldest first: where a serving loop
/// sends the requests whose work grows with data it does not bound (a big catalog's search), so
/// that they never hold the loop, and so that together they take at most one core.
///
/// As a component its thread is the one that calls `run()`; list it before the loop that submits
/// to it. A ``ComponentGroup`` asks both to stop at once: the queue then finishes the job it is
/// running and runs the ones still waiting with `stopping` set, so that they answer at once
/// instead of doing their work, and a stop never waits for a queue of costly jobs (the group's
/// grace period is 10 s; 16 searches of the largest catalog files take longer). Submitting never
/// waits: a full queue takes nothing.
public final class BoundedWorkQueue: Component {
    /// One job; `stopping` is true when the queue was asked to stop before the job's turn came:
    /// the job should then only say that its work was not done.
    public typealias Job = @Sendable (_ stopping: Bool) -> Void

    /// What ``submit(_:)`` did with a job.
    public enum Submission: Sendable, Equatable {
        /// The job is queued for the thread.
        case queued
        /// ``capacity`` jobs wait already; the job was not taken.
        case full
        /// `run()` has not started: no thread takes jobs (a service used without its process's
        /// components: tests, tools); the job was not taken.
        case notStarted
        /// The queue was asked to stop; the job was not taken.
        case stopped
    }

    /// `waitUntilRunning` gave up: the queue's thread did not start in time.
    public struct NotStarted: Error, CustomStringConvertible {
        /// What was waited for.
        public var description: String { "the work queue's thread did not start in time" }
    }

    private struct State {
        var started = false
        var stopping = false
        var jobs: [Job] = []
    }

    /// The most jobs waiting at once, the one running not counted.
    public let capacity: Int
    /// The thread sleeps on it until a job is queued or the queue stops.
    private let state = Monitor(State())

    /// An empty queue holding at most `capacity` (at least 1) waiting jobs.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Queues `job` for the thread, without waiting; see ``Submission``.
    public func submit(_ job: @escaping Job) -> Submission {
        state.update { state -> Submission in
            guard state.started else { return .notStarted }
            guard !state.stopping else { return .stopped }
            guard state.jobs.count < capacity else { return .full }
            state.jobs.append(job)
            return .queued
        }
    }

    /// Runs the queued jobs on the calling thread until ``shutdown()``; then runs the jobs still
    /// queued with `stopping` set, and returns.
    public func run() throws {
        state.update { $0.started = true }
        while let (job, stopping) = nextJob() { job(stopping) }
    }

    /// Asks ``run()`` to return once the job it runs is done and the waiting ones are told to
    /// stop; from now on the queue takes nothing. Returns at once.
    public func shutdown() {
        state.update { $0.stopping = true }
    }

    /// Returns once ``run()`` takes jobs; throws ``NotStarted`` after `timeout`.
    public func waitUntilRunning(timeout: Duration) throws {
        guard state.wait(until: \.started, deadline: .now + timeout) else { throw NotStarted() }
    }

    /// The oldest job and whether the queue is stopping, waiting for one; `nil` once shut down
    /// with none left.
    private func nextJob() -> (Job, Bool)? {
        state.wait(until: { !$0.jobs.isEmpty || $0.stopping }) { state, _ in
            state.jobs.isEmpty ? nil : (state.jobs.removeFirst(), state.stopping)
        }
    }
}
