import Foundation
@testable import Journal
import Testing

@Suite struct FormatTests {
    @Test func eachLineIsJSONWithStrictlyIncreasingSequenceNumbers() throws {
        try withTemporaryDirectory { directory in
            try makeJournal(in: directory, records: 5)
            let text = String(decoding: try readBytes(journalPath(directory)), as: UTF8.self)
            let lines = text.split(separator: "\n")
            #expect(lines.count == 6)
            let objects = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            #expect(objects[0]["format"] as? String == "lyceum-journal")
            #expect(objects[0]["version"] as? Int == 1)
            #expect(objects.dropFirst().map { $0["seq"] as? Int } == [1, 2, 3, 4, 5])
            #expect(objects.allSatisfy { ($0["crc"] as? String)?.count == 8 })
        }
    }

    @Test func roundTripsTransactionsWithEscapesAndDeletes() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
            let changes: [JournalChange] = [
                .put("books", key: "quote\"slash\\tab\tnewline\nü€😀", value: Array(#"{"title":"line\nbreak \"quoted\" \u00e9","n":-1.5e3,"ok":[true,false,null]}"#.utf8)),
                .put("idempotency", key: "request-1", value: Array(#"{"seq":1}"#.utf8)),
                .delete("books", key: "missing"),
            ]
            let pending = try journal.append(changes)
            #expect(try pending.waitUntilDurable().sequence == 1)
            for change in changes { state.apply(change) }
            journal.close()
            #expect(try reopen(directory).state == state)
        }
    }

    @Test(arguments: [
        JournalChange.put("books", key: "b1", value: Array("{\"title\":\"a\"\n}".utf8)),
        JournalChange.put("books", key: "b1", value: Array("{\"title\":\"raw\nnewline\"}".utf8)),
        JournalChange.put("books", key: "b1", value: Array("[1,2]".utf8)),
        JournalChange.put("books", key: "b1", value: Array("{\"a\":1} {\"b\":2}".utf8)),
        JournalChange.put("books", key: "b1", value: Array("{\"a\":01}".utf8)),
        JournalChange.put("books", key: "b1", value: Array("{\"a\":\"\\x\"}".utf8)),
        JournalChange.put("books", key: "b1", value: Array("{\"a\":".utf8)),
        JournalChange.put("books", key: "b1", value: Array("{\"a\":\"".utf8) + [0xFF, 0xFE] + Array("\"}".utf8)),
        JournalChange.put("books", key: "", value: Array("{}".utf8)),
        JournalChange.delete("", key: "b1"),
    ])
    func rejectsMalformedChangesWithoutWriting(_ change: JournalChange) throws {
        try expectRefusedWithoutWriting(change, checking: .full)
    }

    /// Appends a good change and `change` in one record, checked as `check` says: the record
    /// is refused as `invalidChange`, nothing is written, and the journal still takes records.
    private func expectRefusedWithoutWriting(_ change: JournalChange, checking check: ValueCheck) throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
            defer { journal.close() }
            let sizeBefore = journal.size
            let error = journalError { _ = try journal.append([.put("books", key: "ok", value: Array("{}".utf8)), change], checking: check) }
            #expect(error?.code == .invalidChange)
            #expect(journal.size == sizeBefore)
            #expect(journal.lastSequence == 0)
            #expect(journalError { _ = try journal.append([]) }?.code == .invalidChange)
            #expect(try journal.append([.put("books", key: "ok", value: Array(#"{"a":[1]}"#.utf8))], checking: check).sequence == 1)
        }
    }

    /// Values a service vouches for (`.framing`) are not parsed, but anything that would break
    /// the line they are written on is still refused, with nothing written.
    @Test(arguments: [
        JournalChange.put("books", key: "b1", value: Array("{\"title\":\"raw\nnewline\"}".utf8)),
        JournalChange.put("books", key: "b1", value: Array("[1,2]".utf8)),
        JournalChange.put("books", key: "b1", value: Array("{\"a\":".utf8)),
        JournalChange.put("books", key: "b1", value: []),
        JournalChange.put("books", key: "", value: Array("{}".utf8)),
    ])
    func framingCheckRefusesWhatWouldBreakTheLine(_ change: JournalChange) throws {
        try expectRefusedWithoutWriting(change, checking: .framing)
    }

    @Test func exampleFileReplays() throws {
        try withTemporaryDirectory { directory in
            let example = try readBytes(repositoryRoot + "/protocol/examples/journal.jsonl")
            try writeBytes(example, to: journalPath(directory))
            let (state, lastSequence) = try reopen(directory)
            #expect(lastSequence == 4)
            #expect(state.liveCounts == ["books": 1, "progress": 1])
            #expect(state.value(in: "books", key: "b-42") == Array(#"{"id":"b-42","title":"Dune","pages":412}"#.utf8))
            #expect(state.value(in: "progress", key: "learner-7/course-3") == Array(#"{"learner":"learner-7","course":"course-3","percent":60}"#.utf8))
            #expect(try readBytes(journalPath(directory)) == example)
        }
    }
}
