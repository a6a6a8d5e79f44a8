import Foundation
import LyceumLifecycle

/// Tracks which sequence numbers are durable and lets concurrent waiters share one sync.
///
/// Group commit: the first waiter that finds no sync running starts one covering everything
/// written so far; waiters that arrive meanwhile sleep, and when it ends either find themselves
/// covered or one of them starts the next sync for all of them. Throughput grows with concurrency
/// because one `fdatasync` acknowledges every record written before it started. Blocking waiters,
/// the `interval` policy's thread and the acknowledger thread of `whenDurable` callbacks all go
/// through this one tracker, so they share syncs.
final class DurabilityTracker: @unchecked Sendable {
    // NSCondition guards both fields below; @unchecked because the compiler cannot see that.
    private let condition = NSCondition()
    private var durableSequence: UInt64
    private var syncing = false
    private var syncCount: UInt64 = 0
    private var lastSyncTook = Duration.zero
    private let metrics: JournalMetrics

    init(durableSequence: UInt64, metrics: JournalMetrics) {
        self.durableSequence = durableSequence
        self.metrics = metrics
    }

    /// Returns once `sequence` is durable; `sync` makes the file durable and returns the last
    /// sequence number it covered.
    func waitUntilDurable(_ sequence: UInt64, sync: () -> UInt64) {
        condition.lock()
        defer { condition.unlock() }
        while durableSequence < sequence {
            if syncing {
                condition.wait()
                continue
            }
            syncing = true
            condition.unlock()
            let started = ContinuousClock.now
            let covered = sync()
            let took = ContinuousClock.now - started
            condition.lock()
            syncing = false
            syncCount += 1
            lastSyncTook = took
            metrics.synced(in: took)
            durableSequence = max(durableSequence, covered)
            condition.broadcast()
        }
    }

    /// Whether the last sync took longer than `limit`, or one is running now: a thread that
    /// must not wait long should leave the next one to another.
    func mayBeSlow(beyond limit: Duration) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return syncing || lastSyncTook > limit
    }

    /// Syncs performed so far.
    var syncs: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return syncCount
    }

    /// The highest sequence number known to be durable.
    var durable: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return durableSequence
    }

    /// Records that everything through `sequence` is durable by other means (compaction).
    func markDurable(through sequence: UInt64) {
        condition.lock()
        durableSequence = max(durableSequence, sequence)
        condition.broadcast()
        condition.unlock()
    }
}

/// The `interval` policy's background thread: syncs the journal every period until stopped.
final class IntervalSyncer: @unchecked Sendable {
    // NSCondition guards `stopped`.
    private let condition = NSCondition()
    private var stopped = false

    init(milliseconds: Int, sync: @escaping @Sendable () -> Bool) {
        let thread = Thread { [self] in
            Thread.nameCurrent("journal-interval-sync")
            condition.lock()
            defer { condition.unlock() }
            while !stopped {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(milliseconds) / 1000))
                guard !stopped else { return }
                condition.unlock()
                let keepGoing = sync()
                condition.lock()
                if !keepGoing { stopped = true }
            }
        }
        thread.start()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
