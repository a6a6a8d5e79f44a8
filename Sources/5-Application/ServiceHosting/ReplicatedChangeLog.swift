import Journal
import LearningServices
import Replication

/// A replicated partition's `ChangeLog` at its leader: each append is one record of the leader's
/// journal, shipped to the followers by its `ReplicationLeader`, and a ticket counts as durable
/// only once a majority of the replica set (the leader included) has the record fdatasync'ed and
/// the leadership still holds (protocol/replication.md, *The write path*). A write whose
/// leadership ended first fails (the service replies `unavailable`; the client retries through
/// the broker and reaches the next leader, whose request ledger answers it).
public final class ReplicatedChangeLog: ChangeLog {
    /// The leader's journal of the partition.
    public let journal: Journal
    /// The leader's end of the replication channel.
    public let leader: ReplicationLeader

    /// A change log appending to `journal` and acknowledging through `leader`'s majority.
    public init(journal: Journal, leader: ReplicationLeader) {
        self.journal = journal
        self.leader = leader
    }

    /// Appends `changes` as one journal record (see `JournalChangeLog.append(_:)`).
    public func append(_ changes: [JournalChange]) throws -> CommitTicket {
        CommitTicket(sequence: try journal.append(changes, checking: .framing).sequence)
    }

    /// Calls `body` once a majority has the record durable while the leadership holds, or with
    /// `notAcknowledged` when the leadership ends first.
    public func whenDurable(_ ticket: CommitTicket, _ body: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        guard let write = journal.pendingWrite(sequence: ticket.sequence) else {
            body(.failure(JournalError(.invalidChange, "no record with this sequence number was appended", sequence: ticket.sequence)))
            return
        }
        let epoch = leader.epoch
        leader.replicate(write) { acknowledged in
            body(acknowledged ? .success(()) : .failure(ReplicationError(.staleEpoch, "the leadership of epoch \(epoch) ended before a majority had record \(ticket.sequence)")))
        }
    }
}
