import Journal
import LearningServices
import Synchronization

/// A `Journal` seen as the services' `ChangeLog`: each append is one journal record, and a
/// ticket's durability is the journal's acknowledgement of that record.
public final class JournalChangeLog: ChangeLog {
    /// The journal written to.
    public let journal: Journal
    // The journal hands out a PendingWrite per record; it is kept here between `append` (under
    // the service's lock) and `waitUntilDurable` (after it), keyed by sequence number.
    private let pending = Mutex<[UInt64: PendingWrite]>([:])

    /// A change log appending to `journal`.
    public init(journal: Journal) { self.journal = journal }

    /// Appends `changes` as one journal record; see `Journal.append(_:)`.
    public func append(_ changes: [JournalChange]) throws -> CommitTicket {
        let write = try journal.append(changes)
        pending.withLock { $0[write.sequence] = write }
        return CommitTicket(sequence: write.sequence)
    }

    /// Returns once the record is as durable as the journal's policy promises.
    public func waitUntilDurable(_ ticket: CommitTicket) throws {
        guard let write = pending.withLock({ $0.removeValue(forKey: ticket.sequence) }) else {
            throw JournalError(.invalidChange, "no pending record with this sequence number", sequence: ticket.sequence)
        }
        _ = write.waitUntilDurable()
    }
}
