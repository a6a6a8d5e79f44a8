import Journal
import Synchronization

/// The persistence boundary of the write path. A service calls `append` while it holds its
/// state lock (so the log's order is the order changes were applied in), then releases the
/// lock and replies only from the `whenDurable` callback.
public protocol ChangeLog: Sendable {
    /// Appends `changes` as one atomic record, in call order, or throws and appends nothing
    /// (e.g. disk full). Must not wait for durability. Every value is one the service serialized
    /// from typed fields with the JSON module's writers, so a log may trust it to be well-formed.
    func append(_ changes: [JournalChange]) throws -> CommitTicket

    /// Calls `body` exactly once: with success once the record behind `ticket` is as durable as
    /// the configured policy promises, or with the error that keeps it from becoming so. It may
    /// run on the caller's thread before this returns (a log that is durable at once) or later on
    /// a thread the log owns; it must not wait for another `whenDurable` callback of the same log.
    func whenDurable(_ ticket: CommitTicket, _ body: @escaping @Sendable (Result<Void, any Error>) -> Void)
}

/// Names one appended record, to learn when it is durable.
public struct CommitTicket: Sendable, Hashable {
    /// Position of the record in its log.
    public let sequence: UInt64

    /// The ticket of record number `sequence`.
    public init(sequence: UInt64) { self.sequence = sequence }
}

/// A `ChangeLog` in memory, for tests: durable at once, records kept for replay, and able to
/// refuse appends as a full disk would.
public final class InMemoryChangeLog: ChangeLog {
    /// The error appends throw while `isRefusingAppends`.
    public struct Refused: Error, CustomStringConvertible {
        /// Says that the simulated disk is full.
        public var description: String { "no space left on device (simulated)" }
    }

    private struct Contents {
        var records: [[JournalChange]] = []
        var refusing = false
    }

    private let contents = Mutex(Contents())

    /// An empty log that accepts appends.
    public init() {}

    /// Every committed record, oldest first.
    public var records: [[JournalChange]] { contents.withLock { $0.records } }

    /// Every committed change, oldest first, as a replay would read them.
    public var changes: [JournalChange] { records.flatMap { $0 } }

    /// While true, `append` throws `Refused` and stores nothing.
    public var isRefusingAppends: Bool {
        get { contents.withLock { $0.refusing } }
        set { contents.withLock { $0.refusing = newValue } }
    }

    /// Stores `changes` as one record, or throws `Refused`.
    public func append(_ changes: [JournalChange]) throws -> CommitTicket {
        try contents.withLock { (contents) throws(Refused) -> CommitTicket in
            guard !contents.refusing else { throw Refused() }
            contents.records.append(changes)
            return CommitTicket(sequence: UInt64(contents.records.count))
        }
    }

    /// Calls `body` with success at once, on the caller's thread: memory is this log's whole
    /// durability.
    public func whenDurable(_ ticket: CommitTicket, _ body: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        body(.success(()))
    }
}
