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
        /// The sync that failed: final (DurableFiles' policy), so every later wait that it did
        /// not cover fails with it instead of syncing again.
        var failure: JournalError?
    }

    private enum Turn {
        case covered
        case failed(JournalError)
        case sync
    }

    init(durableSequence: UInt64, metrics: JournalMetrics) {
        state = Monitor(State(durableSequence: durableSequence))
        self.metrics = metrics
    }

    /// Returns once `sequence` is durable; `sync` makes the file durable and returns the last
    /// sequence number it covered.
    /// - Throws: the `syncFailed` error of the sync that failed, for every record it did not
    ///   cover, now and later: a failed sync is never retried.
    func waitUntilDurable(_ sequence: UInt64, sync: () throws(JournalError) -> UInt64) throws(JournalError) {
        // Each turn: covered already, failed, or no sync running and this waiter starts one for all.
        while true {
            let turn = state.wait(until: { $0.durableSequence >= sequence || !$0.syncing || $0.failure != nil }, then: { state, _ -> Turn in
                if state.durableSequence >= sequence { return .covered }
                if let failure = state.failure { return .failed(failure) }
                state.syncing = true
                return .sync
            })
            switch turn {
            case .covered: return
            case .failed(let failure): throw failure
            case .sync: break
            }
            let started = ContinuousClock.now
            let covered: Result<UInt64, JournalError> = Result { () throws(JournalError) in try sync() }
            let took = ContinuousClock.now - started
            state.update { state in
                state.syncing = false
                switch covered {
                case .success(let sequence):
                    state.syncCount += 1
                    state.lastSyncTook = took
                    metrics.synced(in: took)
                    state.durableSequence = max(state.durableSequence, sequence)
                case .failure(let failure):
                    state.failure = state.failure ?? failure
                }
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
