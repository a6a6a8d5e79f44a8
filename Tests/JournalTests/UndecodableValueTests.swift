import Foundation
import Journal
import Testing

/// A state that refuses any value holding `"bad"`, as a service refuses a value it cannot decode.
struct PickyState: JournalState {
    var keyed = KeyedJournalState()

    mutating func apply(_ change: JournalChange) throws(UndecodableValue) {
        if let value = change.value, String(decoding: value, as: UTF8.self).contains("bad") {
            throw UndecodableValue(change, .malformed("it is bad"))
        }
        keyed.apply(change)
    }

    func snapshot() -> [JournalChange] { keyed.snapshot() }
}

/// A value the state cannot decode stops replay exactly like damage: named, never skipped.
@Suite struct UndecodableValueTests {
    static let bad = Array(#"{"bad":true}"#.utf8)

    /// Records 1, 2 and 4 are good, record 3 holds a bad value after a good change.
    func journalWithABadRecord(in directory: String) throws {
        let service = try GuardedState(directory: directory, options: JournalOptions(durability: .none))
        for number in 0..<2 { try service.write([.put("books", key: "b\(number)", value: bookValue(number))]) }
        try service.write([.put("books", key: "b2", value: bookValue(2)), .put("books", key: "b3", value: Self.bad)])
        try service.write([.put("books", key: "b4", value: bookValue(4))])
        service.journal.close()
    }

    @Test func openRefusesNamingTheRecordAndChangesNothing() throws {
        try withTemporaryDirectory { directory in
            try journalWithABadRecord(in: directory)
            let before = try readBytes(journalPath(directory))
            let offset = UInt64(lineBoundaries(before)[3])
            var state = PickyState()
            state.keyed.apply(.put("earlier", key: "k", value: Array("{}".utf8)))
            let error = journalError { _ = try Journal.open(directory: directory, state: &state) }
            #expect(error?.code == .undecodableValue)
            #expect(error?.path == journalPath(directory) && error?.offset == offset && error?.sequence == 3)
            #expect(error?.message.contains("the value of books/b3 does not decode: it is bad") == true, "\(String(describing: error))")
            #expect(state.keyed.liveCounts == ["earlier": 1], "the caller's state is untouched")
            #expect(try readBytes(journalPath(directory)) == before, "the file is untouched")

            var checked = PickyState()
            let report = try Journal.check(directory: directory, state: &checked)
            #expect(!report.isHealthy)
            #expect(report.problem?.code == .undecodableValue && report.problem?.offset == offset && report.lastSequence == 2)
        }
    }

    @Test func aBadValueInTheSnapshotIsRefusedToo() throws {
        try withTemporaryDirectory { directory in
            try journalWithABadRecord(in: directory)
            // A tool that does not decode values keeps the bad one, byte for byte.
            var raw = KeyedJournalState()
            let journal = try Journal.open(directory: directory, state: &raw)
            try journal.compact { (raw, journal.lastSequence) }
            journal.close()
            let error = journalError {
                var state = PickyState()
                _ = try Journal.open(directory: directory, state: &state)
            }
            #expect(error?.code == .undecodableValue && error?.sequence == 4)
            #expect(error?.offset == UInt64(lineBoundaries(try readBytes(journalPath(directory)))[1]))
        }
    }

    @Test func aCaptureThatThrowsRefusesTheCompaction() throws {
        try withTemporaryDirectory { directory in
            let service = try GuardedState(directory: directory, options: JournalOptions(durability: .none))
            try service.write([.put("books", key: "b0", value: bookValue(0))])
            let before = try readBytes(journalPath(directory))
            let refusal = UndecodableValue(collection: "books", key: "b1", .malformed("it is bad"))
            #expect(throws: refusal) { try service.journal.compact { throw refusal } }
            #expect(try readBytes(journalPath(directory)) == before)
            try service.write([.put("books", key: "b2", value: bookValue(2))])
            service.journal.close()
            #expect(try reopen(directory).lastSequence == 2)
        }
    }
}
