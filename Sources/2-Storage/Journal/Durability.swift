import Foundation
import LyceumLifecycle
import LyceumSupport

/// Tracks which sequence numbers are durable and lets concurrent waiters share one sync.
///
/// Group commit: the first waiter that finds no sync running starts one covering everything
/// written so far; waiters that arrive meanwhile sleep, and when it ends either find themselves
/// covered or one of them starts the next sync for all of them. Throughput grows with concurrency
/// because one `fdatasync` acknowledges every record written before it started. Blocking waiters,
/// the `interval` policy's thread and the acknowledger thread of `whenDurable` callbacks all go
/// through this one tracker, so they share syncs.
final class DurabilityTracker: Sendable {
    /// What the waiters share; a waiter sleeps on it while another's sync runs.
    private let state: Monitor<State>
    private let metrics: JournalMetrics

    private struct State {
        var durableSequence: UInt64
        var syncing = false
        var syncCount: UInt64 = 0
        var lastSyncTook = Duration.zero
    }

    init(durableSequence: UInt64, metrics: JournalMetrics) {
        state = Monitor(State(durableSequence: durableSequence))
        self.metrics = metrics
    }

    /// Returns once `sequence` is durable; `sync` makes the file durable and returns the last
    /// sequence number it covered.
    func waitUntilDurable(_ sequence: UInt64, sync: () -> UInt64) {
        // Each turn: covered already, or no sync running and this waiter starts one for all.
        while state.wait(until: { $0.durableSequence >= sequence || !$0.syncing }, then: { state, _ in
            guard state.durableSequence < sequence else { return false }
            state.syncing = true
            return true
        }) {
            let started = ContinuousClock.now
            let covered = sync()
            let took = ContinuousClock.now - started
            state.update { state in
                state.syncing = false
                state.syncCount += 1
                state.lastSyncTook = took
                metrics.synced(in: took)
                state.durableSequence = max(state.durableSequence, covered)
            }
        }
    }

    /// Whether the last sync took longer than `limit`, or one is running now: a thread that
    /// must not wait long should leave the next one to another.
    func mayBeSlow(beyond limit: Duration) -> Bool {
        state.withLock { $0.syncing || $0.lastSyncTook > limit }
    }

    /// Syncs performed so far.
    var syncs: UInt64 { state.withLock { $0.syncCount } }

    /// The highest sequence number known to be durable.
    var durable: UInt64 { state.withLock { $0.durableSequence } }

    /// Records that everything through `sequence` is durable by other means (compaction).
    func markDurable(through sequence: UInt64) {
        state.update { $0.durableSequence = max($0.durableSequence, sequence) }
    }
}

/// The `interval` policy's background thread: syncs the journal every period until stopped.
final class IntervalSyncer: Sendable {
    /// Whether `stop()` was called; the thread sleeps on it between syncs.
    private let stopped = Monitor(false)

    init(milliseconds: Int, sync: @escaping @Sendable () -> Bool) {
        let thread = Thread { [self] in
            Thread.nameCurrent("journal-interval-sync")
            // A sync every period, until stopped or until a sync says to stop.
            while !stopped.wait(until: { $0 }, deadline: .now + .milliseconds(milliseconds)) {
                guard sync() else { return }
            }
        }
        thread.start()
    }

    func stop() {
        stopped.update { $0 = true }
    }
}
