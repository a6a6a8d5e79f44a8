import LyceumLifecycle
import Synchronization

/// The `always` policy's acknowledgements for a thread that runs a ``BatchedSignals`` batch (a
/// broker's or a worker pool's loop): their callbacks wait for the end of the batch, where that
/// same thread syncs once for all of them and then runs them, in sequence order; or, while the
/// disk is slow, hands them all at once to the journal's acknowledger thread.
///
/// Syncing on the loop's own thread is how Redis serves `appendfsync always`: one thread reads
/// every ready request, writes them, syncs once and replies to all, with no hand-off. Requests
/// that arrive during the sync wait in the sockets' queues and make the next batch larger, so the
/// sync, the wake-ups and the system calls around them are paid once per batch (measured: 0.42 →
/// 0.08 futex calls, 4.5 → 3.2 system calls and 10–25% less server CPU per durable create). Its
/// price is that reads arriving during a sync wait for it: little while syncs take a fraction of
/// a millisecond, but with every sync 20 ms slower (a slow disk) reads beside 50 writers in flight
/// waited 83 ms at p99 instead of 15. So a sync slower than `JournalOptions.loopSyncLimit` sends
/// the following batches to the acknowledger thread, where the loop does not wait for them, until
/// a sync is quick again.
final class BatchAcknowledger: Sendable {
    private struct Waiting {
        let sequence: UInt64
        let callback: DurabilityCallback
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
    func register(_ sequence: UInt64, of journal: Journal, _ callback: DurabilityCallback) -> Bool {
        guard BatchedSignals.isBatching else { return false }
        let first = state.withLock { state -> Bool? in
            guard !state.isClosed else { return nil }
            state.waiting.append(Waiting(sequence: sequence, callback: callback))
            return state.waiting.count == 1 && !state.isAcknowledging
        }
        guard let first else { return false }
        if first { BatchedSignals.signal(self) { [self] in acknowledge(journal) } }
        return true
    }

    /// Makes every queued record durable and runs their callbacks in sequence order: here, with
    /// one sync (none if a sync already covers them) and the callbacks as one batch of their own,
    /// then the same for what those callbacks registered, until nothing waits; or, when the last
    /// sync was slow or the acknowledger thread still has callbacks (which these must not
    /// overtake), by handing them to that thread. `closing` refuses later registrations.
    func acknowledge(_ journal: Journal, closing: Bool = false) {
        while true {
            let ready = state.withLock { state in
                if closing { state.isClosed = true }
                state.isAcknowledging = false
                var taken: [Waiting] = []
                swap(&taken, &state.waiting)
                return taken
            }
            // Appends happen in sequence order on the batch's thread, so the last is the highest.
            guard let target = ready.last?.sequence else { return }
            if journal.durability.mayBeSlow(beyond: journal.options.loopSyncLimit) || !journal.acknowledger.isIdle,
               journal.acknowledger.register(ready.map { ($0.sequence, $0.callback) }, of: journal) {
                return
            }
            state.withLock { $0.isAcknowledging = true }
            var failure: JournalError?
            do { try journal.durability.waitUntilDurable(target, sync: journal.syncCurrentFile) } catch { failure = error }
            let durable = journal.durability.durable
            BatchedSignals.run {
                for entry in ready { entry.callback.settle(entry.sequence, durable: durable, failure: failure) }
            }
        }
    }
}
