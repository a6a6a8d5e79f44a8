/// Counters that show how a journal has been working since it was opened.
public struct JournalStatistics: Sendable, Equatable {
    /// Records appended.
    public let appends: UInt64
    /// `fdatasync` calls made to acknowledge writers or by the `interval` policy's thread.
    public let syncs: UInt64
}

/// A record written to the journal but not yet known to be durable.
///
/// The only way to get the `JournalAcknowledgement` a reply needs is `waitUntilDurable()`, so no
/// writer can be acknowledged before the journal's durability policy is met.
public struct PendingWrite: Sendable {
    let journal: Journal
    /// The record's sequence number.
    public let sequence: UInt64

    /// Blocks until the record is as durable as the journal's policy promises (for `always`, its
    /// bytes are `fdatasync`ed; other policies return at once), then returns the acknowledgement.
    /// Blocks the calling thread: call it from a worker thread, never while holding a lock other
    /// writers need.
    public func waitUntilDurable() -> JournalAcknowledgement {
        journal.waitUntilDurable(sequence)
        return JournalAcknowledgement(sequence: sequence)
    }
}

/// Proof that a record is as durable as the journal's policy promises; only
/// `PendingWrite.waitUntilDurable()` makes one.
public struct JournalAcknowledgement: Sendable, Equatable {
    /// The acknowledged record's sequence number.
    public let sequence: UInt64
}
