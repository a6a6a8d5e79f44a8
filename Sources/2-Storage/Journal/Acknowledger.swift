import Foundation
import LyceumLifecycle
import LyceumSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `always` policy's acknowledger thread: runs each `PendingWrite.whenDurable` callback once
/// a sync covers its record, so that no writer thread sits in `fdatasync`.
///
/// Group commit: the thread syncs (through the journal's `DurabilityTracker`, so it shares syncs
/// with blocking waiters and the other policies' machinery) up to the highest record waited for;
/// everything registered while that sync runs is covered by the next one. Callbacks of a batch run
/// in sequence order (registration order within one record), each exactly once.
///
/// Waiting entries hold their journal, so a journal with outstanding callbacks stays alive until
/// they have run; the thread holds no journal between batches, so an idle journal can go away.
final class Acknowledger: Sendable {
    /// The callbacks waiting and the thread's phase; the thread sleeps on it for callbacks, and
    /// `finish()` for the thread's end.
    private let state = Monitor(State())

    private struct State {
        var waiting: [Waiting] = []
        var registrations: UInt64 = 0
        var phase = Phase.idle
        /// Whether the thread is running a batch's callbacks (taken out of `waiting`).
        var isRunningBatch = false
        /// The acknowledger thread's id, so that `finish()` called from a callback does not wait for itself.
        var threadID: pthread_t?
    }

    private struct Waiting {
        let journal: Journal
        let sequence: UInt64
        /// Registration order, which breaks ties between callbacks of the same record.
        let order: UInt64
        let callback: DurabilityCallback
    }

    private enum Phase {
        /// No callback registered yet: no thread.
        case idle
        case running
        /// `finish()` was called: the thread runs what is waiting, then ends.
        case stopping
        /// The thread has ended (or never started); registrations are refused.
        case stopped
    }

    /// Queues `body` for record `sequence` of `journal`, starting the thread on first use.
    /// Returns false once `finish()` has stopped the thread: the caller must then make the record
    /// durable and run `body` itself.
    func register(_ sequence: UInt64, of journal: Journal, _ callback: DurabilityCallback) -> Bool {
        register([(sequence, callback)], of: journal)
    }

    /// Queues every callback of `callbacks` for its record of `journal` at once: one lock and
    /// one wake-up for a batch. Returns false, as the one-callback form does, once stopped.
    func register(_ callbacks: [(sequence: UInt64, callback: DurabilityCallback)], of journal: Journal) -> Bool {
        state.update { state in
            switch state.phase {
            case .stopped:
                return false
            case .idle:
                state.phase = .running
                let thread = Thread { [self] in
                    Thread.nameCurrent("journal-acknowledger")
                    run()
                }
                thread.start()
            case .running, .stopping:
                break
            }
            for callback in callbacks {
                state.registrations += 1
                state.waiting.append(Waiting(journal: journal, sequence: callback.sequence, order: state.registrations, callback: callback.callback))
            }
            return true
        }
    }

    /// Whether no callback waits or runs here: callbacks run elsewhere now cannot overtake one
    /// of this thread's.
    var isIdle: Bool {
        state.withLock { $0.waiting.isEmpty && !$0.isRunningBatch }
    }

    /// Stops the thread once every registered callback has run, and refuses later registrations.
    /// Waits for that unless called on the acknowledger thread itself (from a callback), where the
    /// remaining callbacks run as soon as the current one returns.
    func finish() {
        let mustWait = state.update { state in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                return false
            case .running:
                state.phase = .stopping
            case .stopping, .stopped:
                break
            }
            if let threadID = state.threadID, pthread_equal(threadID, pthread_self()) != 0 { return false }
            return true
        }
        if mustWait { state.wait(until: { $0.phase == .stopped }) }
    }

    private func run() {
        state.withLock { $0.threadID = pthread_self() }
        while acknowledgeNextBatch() {}
    }

    /// Waits for callbacks, makes their records durable and runs them. Returns false when the
    /// thread should end. The batch (and with it every journal reference) is released before
    /// this returns, so the thread never keeps an idle journal alive.
    private func acknowledgeNextBatch() -> Bool {
        let next: (journal: Journal, target: UInt64)? = state.update(when: { !$0.waiting.isEmpty || $0.phase != .running }) { state, _ in
            guard let journal = state.waiting.first?.journal, let target = state.waiting.map(\.sequence).max() else {
                // Stopping with nothing left: `finish()` is woken as the update ends.
                state.phase = .stopped
                return nil
            }
            return (journal, target)
        }
        guard let next else { return false }

        var failure: JournalError?
        do { try next.journal.durability.waitUntilDurable(next.target, sync: next.journal.syncCurrentFile) } catch { failure = error }
        let durable = next.journal.durability.durable

        // After a failed sync every callback waiting is settled: acknowledged if an earlier sync
        // covered it, failed otherwise (no later sync will be tried).
        var ready = state.withLock { state in
            var ready: [Waiting] = []
            state.waiting.removeAll { entry in
                guard entry.sequence <= durable || failure != nil else { return false }
                ready.append(entry)
                return true
            }
            state.isRunningBatch = true
            return ready
        }
        defer { state.withLock { $0.isRunningBatch = false } }
        ready.sort { ($0.sequence, $0.order) < ($1.sequence, $1.order) }
        // One batch: what the callbacks hand to other threads (events to publish) wakes them once.
        BatchedSignals.run {
            for entry in ready { entry.callback.settle(entry.sequence, durable: durable, failure: failure) }
        }
        return true
    }
}
