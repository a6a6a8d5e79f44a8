import LyceumLifecycle
import Synchronization

/// The `always` policy's acknowledgements for a thread that runs a ``BatchedSignals`` batch (a
/// broker's or a worker pool's loop): their callbacks wait for the end of the batch, where that
/// same thread syncs once for all of them and then runs them, in sequence order.
///
/// This is how Redis serves `appendfsync always`: one thread reads every ready request, writes
/// them, syncs once and replies to all, with no hand-off to another thread. Requests that arrive
/// during the sync wait in the sockets' queues and make the next batch larger, so the sync, the
/// wake-ups and the system calls around them are paid once per batch rather than once or twice
/// per request (measured: 0.42 → 0.08 futex calls, 0.13 → 0.05 syncs, 4.5 → 3.2 system calls
/// per durable create). The price: the batch's reads wait for its sync too.
final class BatchAcknowledger: Sendable {
    private struct Waiting {
        let sequence: UInt64
        let body: @Sendable (JournalAcknowledgement) -> Void
    }

    private struct State {
        var waiting: [Waiting] = []
        /// Set by `Journal.close()`: later callbacks run at once on their caller's thread.
        var isClosed = false
        /// Set while ``acknowledge(_:closing:)`` runs callbacks: what they register is taken by
        /// its next round instead of a batch of its own, so that a callback that writes again
        /// (a closed loop) adds rounds, not stack frames.
        var isAcknowledging = false
    }

    private let state = Mutex(State())

    /// Queues `body` for record `sequence` and arranges for ``acknowledge(_:)`` to run at the end
    /// of the calling thread's batch. Returns false, queuing nothing, when the calling thread
    /// runs no batch or the journal is closed.
    func register(_ sequence: UInt64, of journal: Journal, _ body: @escaping @Sendable (JournalAcknowledgement) -> Void) -> Bool {
        guard BatchedSignals.isBatching else { return false }
        let first = state.withLock { state -> Bool? in
            guard !state.isClosed else { return nil }
            state.waiting.append(Waiting(sequence: sequence, body: body))
            return state.waiting.count == 1 && !state.isAcknowledging
        }
        guard let first else { return false }
        if first { BatchedSignals.signal(self) { [self] in acknowledge(journal) } }
        return true
    }

    /// Makes every queued record durable with one sync (none if a sync already covers them) and
    /// runs their callbacks in sequence order, as one batch of their own, so that what they hand
    /// to other threads wakes each one once; then does the same for what those callbacks
    /// registered, until nothing waits. `closing` refuses later registrations.
    func acknowledge(_ journal: Journal, closing: Bool = false) {
        while true {
            let ready = state.withLock { state in
                if closing { state.isClosed = true }
                var taken: [Waiting] = []
                swap(&taken, &state.waiting)
                state.isAcknowledging = !taken.isEmpty
                return taken
            }
            // Appends happen in sequence order on the batch's thread, so the last is the highest.
            guard let target = ready.last?.sequence else { return }
            journal.durability.waitUntilDurable(target, sync: journal.syncCurrentFile)
            BatchedSignals.run {
                for entry in ready { entry.body(JournalAcknowledgement(sequence: entry.sequence)) }
            }
        }
    }
}
