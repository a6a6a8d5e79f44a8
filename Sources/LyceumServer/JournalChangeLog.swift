import Journal
import LearningServices

/// A `Journal` seen as the services' `ChangeLog`: each append is one journal record, and a
/// ticket's durability is the journal's acknowledgement of that record.
public final class JournalChangeLog: ChangeLog {
    /// The journal written to.
    public let journal: Journal

    /// A change log appending to `journal`.
    public init(journal: Journal) { self.journal = journal }

    /// Appends `changes` as one journal record; see `Journal.append(_:)`.
    public func append(_ changes: [JournalChange]) throws -> CommitTicket {
        CommitTicket(sequence: try journal.append(changes).sequence)
    }

    /// Returns once the record is as durable as the journal's policy promises. Several callers
    /// may wait for the same record: a retried or no-op write waits for the last one appended.
    public func waitUntilDurable(_ ticket: CommitTicket) throws {
        guard let write = journal.pendingWrite(sequence: ticket.sequence) else {
            throw JournalError(.invalidChange, "no record with this sequence number was appended", sequence: ticket.sequence)
        }
        _ = write.waitUntilDurable()
    }
}
