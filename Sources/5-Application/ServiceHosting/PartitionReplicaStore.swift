import Foundation
import Journal
import Replication

/// A replicated partition's journal on this node and the state it replays into: the
/// `ReplicaStore` its `PartitionReplica` appends the leader's records to while following, and
/// what a leadership's service starts from (``takeState()``). The state is this store's alone:
/// nothing is served from it while following. Once a leadership took it, the service writes
/// the journal and the state here misses those records, so the journal is replayed again before
/// the store next appends or hands the state over.
public final class PartitionReplicaStore: ReplicaStore, @unchecked Sendable {
    /// The partition's directory (`DATA/books/p7`).
    public let directory: String
    private let emptyState: @Sendable () -> any JournalState
    private let options: JournalOptions
    private let lock = NSLock()
    private var current: Journal
    private var state: any JournalState
    /// Whether a leadership wrote the journal since `state` was replayed.
    private var stale = false

    /// Opens the journal in `directory`, replaying it into `emptyState()`.
    init(directory: String, emptyState: @escaping @Sendable () -> any JournalState, options: JournalOptions) throws {
        self.directory = directory
        self.emptyState = emptyState
        self.options = options
        (current, state) = try Self.open(directory: directory, emptyState: emptyState, options: options)
    }

    /// The partition's journal now (another one after a truncation or a replay).
    public var journal: Journal { lock.withLock { current } }

    /// The sequence number of the journal's last record.
    public var lastSequence: UInt64 { journal.lastSequence }

    /// Appends a leader's record unchanged and applies it to this store's state.
    public func append(_ record: ReplicatedRecord) throws -> PendingWrite {
        try lock.withLock {
            try replayIfStale()
            let pending = try current.appendReplicated(record)
            for change in record.changes() { try state.apply(change) }
            return pending
        }
    }

    /// Cuts the journal's records after `sequence` and replays what is left.
    public func truncate(after sequence: UInt64) throws -> Int {
        try lock.withLock {
            current.close()
            let count = try Journal.truncate(directory: directory, after: sequence)
            (current, state) = try Self.open(directory: directory, emptyState: emptyState, options: options)
            stale = false
            return count
        }
    }

    /// The journal and its replayed state, for a leadership's service, which writes the
    /// journal from then on.
    func takeState() throws -> (journal: Journal, state: any JournalState) {
        try lock.withLock {
            try replayIfStale()
            stale = true
            return (current, state)
        }
    }

    /// Closes the journal (the node stops).
    public func close() {
        lock.withLock { current.close() }
    }

    /// Replays the journal again into a fresh state, reading it beside the open journal (which
    /// leader links may be reading), once a leadership's service has stopped writing it.
    private func replayIfStale() throws {
        guard stale else { return }
        var fresh = emptyState()
        let report = try Journal.check(directory: directory, state: &fresh)
        guard report.problem == nil, report.lastSequence == current.lastSequence else {
            throw JournalError(
                .invalidRecord, "replaying the replica's journal after its leadership ended read up to record \(report.lastSequence), "
                    + "not \(current.lastSequence)", path: report.path)
        }
        state = fresh
        stale = false
    }

    private static func open(
        directory: String, emptyState: () -> any JournalState, options: JournalOptions
    ) throws -> (Journal, any JournalState) {
        var state = emptyState()
        let journal = try Journal.open(directory: directory, options: options, state: &state)
        return (journal, state)
    }
}
