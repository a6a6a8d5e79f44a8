import Foundation
import Journal
import LyceumTestSupport
import Replication

/// A partition's journal and state as a test holds them: the ReplicaStore of a follower, and the
/// writer of a leader.
final class TestStore: ReplicaStore, @unchecked Sendable {
    let directory: String
    private let lock = NSLock()
    private var current: Journal
    private(set) var state = KeyedJournalState()

    init(directory: String) throws {
        self.directory = directory
        var state = KeyedJournalState()
        current = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
        self.state = state
    }

    var journal: Journal { lock.withLock { current } }
    var lastSequence: UInt64 { lock.withLock { current.lastSequence } }
    var history: String { directory + "/epochs.jsonl" }

    /// A leader's write: one book.
    func write(_ number: Int) throws -> PendingWrite {
        try lock.withLock {
            let change = JournalChange.put("books", key: "b\(number)", value: Array(#"{"id":"b\#(number)","pages":\#(number)}"#.utf8))
            let pending = try current.append([change])
            state.apply(change)
            return pending
        }
    }

    func append(_ record: ReplicatedRecord) throws -> PendingWrite {
        try lock.withLock {
            let pending = try current.appendReplicated(record)
            for change in record.changes() { state.apply(change) }
            return pending
        }
    }

    func truncate(after sequence: UInt64) throws -> Int {
        try lock.withLock {
            current.close()
            let count = try Journal.truncate(directory: directory, after: sequence)
            var fresh = KeyedJournalState()
            current = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &fresh)
            state = fresh
            return count
        }
    }

    func install(staged staging: String, lastSequence: UInt64) throws {
        try lock.withLock {
            var fresh = KeyedJournalState()
            let report = try Journal.check(directory: staging, state: &fresh)
            guard report.problem == nil, report.lastSequence == lastSequence else {
                throw JournalError(.invalidRecord, "the staged image replays to \(report.lastSequence), not \(lastSequence)")
            }
            current.close()
            defer {
                var reopened = KeyedJournalState()
                if let journal = try? Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &reopened) {
                    current = journal
                    state = reopened
                }
            }
            try Journal.install(staged: staging, into: directory)
        }
    }

    /// Compacts the journal now, with this store's state.
    func compact() throws {
        let journal = self.journal
        try journal.compact { lock.withLock { (state, current.lastSequence) } }
    }

    func close() { lock.withLock { current.close() } }

    var bytes: [UInt8] { (try? Array(Data(contentsOf: URL(fileURLWithPath: directory + "/journal.jsonl")))) ?? [] }
}
