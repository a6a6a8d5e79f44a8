import LyceumSupport
import Synchronization
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// What a replication link's thread shares with the threads that wake it, detach from it and
/// stop it (``ReplicationRouter``, ``FollowerLink``): its wake-up pipe, its stop, and its passes
/// over the partitions it serves, so that a partition detached is never touched again once
/// ``awaitPassInProgress()`` returns.
final class LinkControl: Sendable {
    /// The pipe the thread polls beside its socket: ``wake()`` makes it readable.
    let wakeup: WakeupPipe
    private let stopped = Atomic<Bool>(false)
    /// Whether the thread has closed its socket and returned.
    private let finished = Monitor(false)
    /// Whether the thread is inside a pass, and how many it finished.
    private let passes = Monitor((inside: false, finished: UInt64(0)))
    /// The link's thread, once it runs: a partition detached from inside a pass (on this
    /// thread) does not wait for the pass to end.
    private let thread = Mutex<pthread_t?>(nil)

    /// A control for a thread about to start.
    /// - Throws: the pipe's error (too many open files).
    init() throws {
        wakeup = try WakeupPipe()
    }

    /// Whether ``stop()`` was asked (or the thread never started): the thread's loop ends.
    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Wakes the thread at once.
    func wake() { wakeup.signal() }

    /// Called first by the link's thread: `socket` and the wake-up pipe in a poller.
    func started(polling socket: Socket) throws -> Poller {
        thread.withLock { $0 = pthread_self() }
        var poller = Poller()
        try poller.add(socket)
        poller.add(fileDescriptor: wakeup.fileDescriptor)
        return poller
    }

    /// Called last by the link's thread, once its socket is closed (or when it never started).
    func finish() {
        stopped.store(true, ordering: .relaxed)
        finished.update { $0 = true }
    }

    /// Asks the thread to stop and waits until it has (idempotent).
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        wakeup.signal()
        finished.wait(until: { $0 })
    }

    /// Runs `body` as one pass of the thread over its partitions.
    func pass<Result>(_ body: () throws -> Result) rethrows -> Result {
        passes.withLock { $0.inside = true }
        defer { passes.update { $0 = (inside: false, finished: $0.finished + 1) } }
        return try body()
    }

    /// Waits until the pass in progress, if any, has ended: what was detached before this call
    /// is never touched by the thread again. On the thread itself it returns at once (the pass
    /// checks what it touches).
    func awaitPassInProgress() {
        if let thread = thread.withLock({ $0 }), pthread_equal(thread, pthread_self()) != 0 { return }
        let (inside, finished) = passes.withLock { ($0.inside, $0.finished) }
        if inside { passes.wait(until: { $0.finished > finished }) }
    }
}
