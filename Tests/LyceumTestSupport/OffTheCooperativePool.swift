import Foundation
import Synchronization
import Testing

/// A trait that runs each test of a suite on threads of its own instead of Swift's cooperative
/// pool, which has one thread per core and runs every synchronous test body to its end: on a
/// 2-core machine, the suite's blocking process tests keep it busy for minutes.
///
/// - Async tests that time a server (stop it, call, continue it) need it: on the pool, each
///   continuation after an `await` waits behind that backlog, so the steps land minutes apart.
/// - Long blocking `.serialized` suites (ClusterTests) use it to give the pool back.
///
/// Every job gets a thread, so it removes the pool's bound on how many tests run at once: use it
/// on async or `.serialized` suites only.
public struct OffTheCooperativePool: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test in the suite.
    public var isRecursive: Bool { true }

    /// Runs the test case with ``ThreadPerJobExecutor`` as its task executor preference.
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await Self.hop(to: function) }
    }

    /// Runs `function` after moving to the task's preferred executor: a nonisolated(nonsending)
    /// caller would otherwise run it, synchronous test body and all, on the pool thread it is on.
    @concurrent private static func hop(to function: @Sendable () async throws -> Void) async throws {
        try await function()
    }
}

extension Trait where Self == OffTheCooperativePool {
    /// Runs each test on threads of its own, not on the cooperative pool: see ``OffTheCooperativePool``.
    public static var offTheCooperativePool: Self { OffTheCooperativePool() }
}

/// A task executor that runs every job on a new thread. A job that blocks (a synchronous test
/// body) holds only its own thread, and the jobs it waits for (its child tasks) get theirs,
/// so nothing it does can wait for a thread it holds.
public final class ThreadPerJobExecutor: TaskExecutor {
    /// The one instance: its only state is which threads are running its jobs.
    public static let shared = ThreadPerJobExecutor()
    private let running = Mutex<Set<pthread_t>>([])

    /// Whether the calling thread is one of this executor's, running a job.
    public var runsTheCurrentThread: Bool {
        let current = pthread_self()
        return running.withLock { $0.contains(current) }
    }

    /// Starts a thread that runs `job`.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { [self] in
            let current = pthread_self()
            running.withLock { _ = $0.insert(current) }
            defer { running.withLock { _ = $0.remove(current) } }
            job.runSynchronously(on: executor)
        }
        // Process tests keep deep stacks (Foundation, libzmq callbacks): as the pool's threads.
        thread.stackSize = 8 << 20
        thread.start()
    }
}
