#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import ZeroMQ

/// The services of a ``WorkerPool`` as every thread sees them: the names served and leaving,
/// the additions and removals its thread has not applied yet, and the pipe that wakes it for
/// them. Callers are checked here, on their own thread, so that a bad change is refused at once
/// and the pool's thread only ever applies valid ones.
final class WorkerPoolServices: Sendable {
    /// A change for the pool's thread to apply.
    enum Change: Sendable {
        /// Open sessions for the service at every broker.
        case add(service: String, handler: WorkerPool.Handler)
        /// Let the service's sessions finish their requests and leave every broker, then call
        /// `completion`.
        case remove(service: String, completion: @Sendable () -> Void)
    }

    private struct State {
        /// Every service with sessions, or about to have them, in the order added.
        var names: [String]
        /// The services being removed: still in `names` until their sessions have left.
        var leaving: Set<String> = []
        var pending: [Change] = []
        /// Set once the pool's thread has stopped: nothing is served any more.
        var stopped = false
        /// The thread running the pool, while it runs.
        var thread: pthread_t?
    }

    private let state: Mutex<State>
    private let hasPending = Atomic<Bool>(false)
    private let pipe: WakeupPipe

    /// The services `names`, already validated by the pool's initializer.
    init(_ names: [String]) throws(MajordomoError) {
        state = Mutex(State(names: names))
        do { pipe = try WakeupPipe() } catch { throw MajordomoError(error) }
    }

    /// The descriptor the pool's thread polls: readable once a change is queued.
    var fileDescriptor: Int32 { pipe.fileDescriptor }

    /// The services served and not being removed, in the order added.
    var served: [String] {
        state.withLock { state in state.names.filter { !state.leaving.contains($0) } }
    }

    /// Queues the addition of `service`.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` for an empty or `mmi.` name, a service
    ///   the pool serves or is still removing, or a pool that has stopped.
    func add(_ service: String, handler: @escaping WorkerPool.Handler) throws(MajordomoError) {
        guard MDP.isOrdinaryService(service) else {
            throw MajordomoError(code: .invalidArgument, service: service, detail: "a worker's service name must be non-empty and outside mmi.")
        }
        try state.withLock { state throws(MajordomoError) in
            guard !state.stopped else {
                throw MajordomoError(code: .invalidArgument, service: service, detail: "the worker pool has stopped; it serves nothing more")
            }
            guard !state.names.contains(service) else {
                let why = state.leaving.contains(service) ? "is still being removed; add it again once its removal completed" : "is served already"
                throw MajordomoError(code: .invalidArgument, service: service, detail: "the worker pool cannot add \(service): it \(why)")
            }
            state.names.append(service)
            state.pending.append(.add(service: service, handler: handler))
        }
        wake()
    }

    /// Queues the removal of `service`; `completion` is called once its sessions have left
    /// (at once when the pool has stopped).
    /// - Throws: ``MajordomoError/Code/invalidArgument`` when the pool does not serve `service`
    ///   or is removing it already.
    func remove(_ service: String, completion: @escaping @Sendable () -> Void) throws(MajordomoError) {
        let stopped = try state.withLock { state throws(MajordomoError) in
            guard state.names.contains(service), !state.leaving.contains(service) else {
                let served = state.names.filter { !state.leaving.contains($0) }
                throw MajordomoError(code: .invalidArgument, service: service,
                                     detail: "the worker pool serves no service \(service) to remove; it serves \(served.joined(separator: ", "))")
            }
            guard !state.stopped else {
                state.names.removeAll { $0 == service }
                return true
            }
            state.leaving.insert(service)
            state.pending.append(.remove(service: service, completion: completion))
            return false
        }
        if stopped { completion() } else { wake() }
    }

    /// Whether the caller runs on the pool's thread, where waiting for a removal would wait forever.
    var isPoolThread: Bool {
        state.withLock { state in state.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Whether a change waits; cheap enough for every pass of the pool's loop.
    var hasChanges: Bool { hasPending.load(ordering: .acquiring) }

    /// Takes the queued changes, oldest first, after emptying the pipe.
    func take() -> [Change] {
        pipe.reset()
        return state.withLock { state in
            hasPending.store(false, ordering: .releasing)
            defer { state.pending.removeAll() }
            return state.pending
        }
    }

    /// Records that `service`'s sessions have all left: it may be added again.
    func removed(_ service: String) {
        state.withLock { state in
            state.names.removeAll { $0 == service }
            state.leaving.remove(service)
        }
    }

    /// Records the calling thread as the pool's.
    func started() {
        state.withLock { $0.thread = pthread_self() }
    }

    /// Records that the pool's thread has stopped and calls the completions of the removals it
    /// never applied: with the pool stopped, their services have left.
    func stopped() {
        let unapplied = state.withLock { state in
            state.stopped = true
            state.thread = nil
            defer { state.pending.removeAll() }
            return state.pending
        }
        for case .remove(let service, let completion) in unapplied {
            removed(service)
            completion()
        }
    }

    private func wake() {
        hasPending.store(true, ordering: .releasing)
        pipe.signal()
    }
}

/// A one-shot signal that a thread other than the pool's waits on for a removal to complete.
final class PoolRemovalSignal: Sendable {
    private let pipe: WakeupPipe

    init() throws(MajordomoError) {
        do { pipe = try WakeupPipe() } catch { throw MajordomoError(error) }
    }

    /// Lets ``wait()`` return.
    func signal() { pipe.signal() }

    /// Returns once ``signal()`` has been called, at once if it has.
    func wait() {
        var descriptor = pollfd(fd: pipe.fileDescriptor, events: Int16(POLLIN), revents: 0)
        // Interrupted by a signal (EINTR): wait again.
        while poll(&descriptor, 1, -1) <= 0 {}
    }
}
