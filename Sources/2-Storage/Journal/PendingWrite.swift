/// Counters that show how a journal has been working since it was opened.
public struct JournalStatistics: Sendable, Equatable {
    /// Records appended.
    public let appends: UInt64
    /// `fdatasync` calls made to acknowledge writers or by the `interval` policy's thread.
    public let syncs: UInt64
}

/// A record written to the journal but not yet known to be durable.
///
/// The only ways to get the `JournalAcknowledgement` a reply needs are `waitUntilDurable()` and
/// `whenDurable(_:)`, so no writer can be acknowledged before the journal's durability policy is met.
public struct PendingWrite: Sendable {
    let journal: Journal
    /// The record's sequence number.
    public let sequence: UInt64

    /// Blocks until the record is as durable as the journal's policy promises (for `always`, its
    /// bytes are `fdatasync`ed; other policies return at once), then returns the acknowledgement.
    /// Blocks the calling thread: call it from a worker thread, never while holding a lock other
    /// writers need.
    /// - Throws: `syncFailed` when the sync that was to cover the record failed (the record is
    ///   never acknowledged; protocol/journal.md, *A failed sync*).
    public func waitUntilDurable() throws(JournalError) -> JournalAcknowledgement {
        try journal.waitUntilDurable(sequence)
        return JournalAcknowledgement(sequence: sequence)
    }

    /// Calls `body` exactly once with the acknowledgement, once the record is as durable as the
    /// journal's policy promises, without holding the calling thread.
    ///
    /// - `always`: `body` runs after an `fdatasync` that covers the record. Called inside a
    ///   `BatchedSignals` batch (a broker's or worker pool's loop), it runs at the batch's end on
    ///   the calling thread, which syncs once for every record the batch wrote (after a sync
    ///   slower than `JournalOptions.loopSyncLimit`, the batch goes to the acknowledger thread
    ///   instead); called outside one, it runs on the journal's acknowledger thread (started on first use, ended by
    ///   `close()` or release), where callbacks registered while a sync runs are acknowledged
    ///   together by the next one (group commit). A sync a blocking `waitUntilDurable()` started
    ///   serves both. Callbacks acknowledged together run in sequence order. `body` should return
    ///   quickly and must never wait for another callback of the same journal, nor for the
    ///   batch's thread: every later acknowledgement waits for it.
    /// - `interval` and `none`: the record already counts as durable, so `body` runs at once, on
    ///   the caller's thread, before this returns.
    /// - After `Journal.close()` (which made every record durable), `body` runs at once on the
    ///   caller's thread. `close()` itself runs every callback still outstanding before it returns.
    ///
    /// - A failed sync: `body` never runs for a record the sync did not cover; `failed` runs
    ///   instead (when given), with the `syncFailed` error, where `body` would have, so that the
    ///   writer gets an error reply rather than none (protocol/journal.md, *A failed sync*).
    ///
    /// Register outside any lock that `body` or other writers need: with the policies that call
    /// back at once, `body` runs inside this call.
    public func whenDurable(
        _ body: @escaping @Sendable (JournalAcknowledgement) -> Void, ifFailed failed: (@Sendable (JournalError) -> Void)? = nil
    ) {
        journal.whenDurable(sequence, DurabilityCallback(acknowledged: body, failed: failed))
    }
}

/// What runs once the sync that decides a record's fate has ended: `acknowledged` if it covered
/// the record, else `failed` (the one or the other, once).
struct DurabilityCallback: Sendable {
    let acknowledged: @Sendable (JournalAcknowledgement) -> Void
    let failed: (@Sendable (JournalError) -> Void)?

    /// Runs the callback that fits record `sequence` when everything through `durable` is
    /// durable and `failure` (if any) ended the syncs.
    func settle(_ sequence: UInt64, durable: UInt64, failure: JournalError?) {
        if sequence <= durable {
            acknowledged(JournalAcknowledgement(sequence: sequence))
        } else if let failure {
            failed?(failure)
        }
    }
}

/// Proof that a record is as durable as the journal's policy promises; only
/// `PendingWrite.waitUntilDurable()` and `PendingWrite.whenDurable(_:)` make one.
public struct JournalAcknowledgement: Sendable, Equatable {
    /// The acknowledged record's sequence number.
    public let sequence: UInt64
}
