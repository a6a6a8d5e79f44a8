import Foundation
import Journal
import LyceumTestSupport
import Replication

/// A partition's journal and state as a test holds them: the ReplicaStore of a follower, and the
/// writer of a leader.
final class TestStore: ReplicaStore, @unchecked Sendable {
    let directory: String
    private let lock = NSLock()
    private var journal: Journal
    private(set) var state = KeyedJournalState()

    init(directory: String) throws {
        self.directory = directory
        var state = KeyedJournalState()
        journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
        self.state = state
    }

    var currentJournal: Journal { lock.withLock { journal } }
    var lastSequence: UInt64 { lock.withLock { journal.lastSequence } }
    var history: String { directory + "/epochs.jsonl" }

    /// A leader's write: one book.
    func write(_ number: Int) throws -> PendingWrite {
        try lock.withLock {
            let change = JournalChange.put("books", key: "b\(number)", value: Array(#"{"id":"b\#(number)","pages":\#(number)}"#.utf8))
            let pending = try journal.append([change])
            state.apply(change)
            return pending
        }
    }

    func append(_ record: ReplicatedRecord) throws -> PendingWrite {
        try lock.withLock {
            let pending = try journal.appendReplicated(record)
            for change in record.changes() { state.apply(change) }
            return pending
        }
    }

    func truncate(after sequence: UInt64) throws -> Int {
        try lock.withLock {
            journal.close()
            let count = try Journal.truncate(directory: directory, after: sequence)
            var fresh = KeyedJournalState()
            journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &fresh)
            state = fresh
            return count
        }
    }

    func close() { lock.withLock { journal.close() } }

    var bytes: [UInt8] { (try? Array(Data(contentsOf: URL(fileURLWithPath: directory + "/journal.jsonl")))) ?? [] }
}
