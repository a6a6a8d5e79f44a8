import Journal
import LearningServices
import Synchronization

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
