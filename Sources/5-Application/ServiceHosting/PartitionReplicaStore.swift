import Foundation
import Journal
import LyceumLogging
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
        compactAutomatically()
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
            compactAutomatically()
            return count
        }
    }

    /// Checks the staged image replays through `lastSequence`, then puts it in place of the
    /// journal and replays the state from it.
    public func install(staged staging: String, lastSequence: UInt64) throws {
        try lock.withLock {
            var fresh = emptyState()
            let report = try Journal.check(directory: staging, state: &fresh)
            guard report.problem == nil, report.lastSequence == lastSequence else {
                throw JournalError(
                    .invalidRecord, "the staged image replays to record \(report.lastSequence), not \(lastSequence)\(report.problem.map { ": \($0)" } ?? "")",
                    path: report.path)
            }
            current.close()
            // Whether the rename happened or not, the journal in place is whole: reopen it.
            defer {
                do {
                    (current, state) = try Self.open(directory: directory, emptyState: emptyState, options: options)
                    stale = false
                    compactAutomatically()
                } catch {
                    Logger(component: "replica").error("cannot reopen the replica's journal after an install", ["path": directory, "error": "\(error)"])
                }
            }
            try Journal.install(staged: staging, into: directory)
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

    /// Lets the journal compact itself, capturing this store's state, while no leadership writes
    /// it (a leadership's service compacts it with its own state meanwhile; the store takes it
    /// back when it next replays). A compaction waits at most 100 ms for the store's lock: an
    /// install or truncation holding it closes the journal, which waits for the compaction.
    private func compactAutomatically() {
        current.enableAutomaticCompaction { [weak self] in
            guard let self else { throw JournalError(.closed, "the replica store is gone") }
            guard lock(within: .milliseconds(100)) else {
                throw JournalError(.compactionRejected, "the replica store is busy (an install or a truncation)", path: directory)
            }
            defer { lock.unlock() }
            try replayIfStale()
            return (state, current.lastSequence)
        }
    }

    /// Takes `lock` if it comes free within `limit`, counted on the monotonic clock: NSLock's
    /// `lock(before:)` takes a wall-clock date, which a jump of the clock would stretch or cut short.
    private func lock(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while !lock.try() {
            guard ContinuousClock.now < deadline else { return false }
            usleep(1000)
        }
        return true
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
        compactAutomatically()
    }

    private static func open(
        directory: String, emptyState: () -> any JournalState, options: JournalOptions
    ) throws -> (Journal, any JournalState) {
        var state = emptyState()
        let journal = try Journal.open(directory: directory, options: options, state: &state)
        return (journal, state)
    }
}
