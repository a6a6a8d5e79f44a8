import Journal

/// A `Journal` seen as the services' `ChangeLog`: each append is one journal record, and a
/// ticket's durability is the journal's acknowledgement of that record.
public final class JournalChangeLog: ChangeLog {
    /// The journal written to.
    public let journal: Journal

    /// A change log appending to `journal`.
    public init(journal: Journal) { self.journal = journal }

    /// Appends `changes` as one journal record; see `Journal.append(_:checking:)`. Their values
    /// are the services' own serializations (`ChangeLog.append(_:)`), so only their framing is
    /// checked.
    public func append(_ changes: [JournalChange]) throws -> CommitTicket {
        CommitTicket(sequence: try journal.append(changes, checking: .framing).sequence)
    }

    /// Calls `body` once the record is as durable as the journal's policy promises, through
    /// `PendingWrite.whenDurable(_:)`: under `always` after the sync at the end of the caller's
    /// batch (or on the journal's acknowledger thread), under the other policies at once on the
    /// caller's thread. Several callers may wait for the same
    /// record: a retried or no-op write waits for the last one appended. A ticket this journal
    /// never issued gets an `invalidChange` error at once; a record whose sync failed gets the
    /// journal's `syncFailed` error.
    public func whenDurable(_ ticket: CommitTicket, _ body: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        guard let write = journal.pendingWrite(sequence: ticket.sequence) else {
            body(.failure(JournalError(.invalidChange, "no record with this sequence number was appended", sequence: ticket.sequence)))
            return
        }
        write.whenDurable({ _ in body(.success(())) }, ifFailed: { body(.failure($0)) })
    }
}
