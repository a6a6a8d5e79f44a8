import Foundation
import Journal
import LearningServices
import LyceumServer
import LyceumTestSupport
import Synchronization
import Testing

/// The journal's bytes do not change with the request path (issue 19): the same books requests,
/// with the clock and the ids fixed, write exactly the journal that the code before the request
/// path's redesign wrote (`Fixtures/journal-compatibility/books.jsonl`, made by that code), and
/// that journal replays into the state those requests left.
struct JournalCompatibilityTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/journal-compatibility/books.jsonl").path
    static let ids = ["6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", "0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9"]

    /// Creates (one with a request id, retried), an update with a request id, a delete, and a
    /// refused write, with text that needs escaping.
    static let requests = [
        #"{"op":"create","learner":"ada","title":"Ἰλιάς \"Α\"","author":"Homer","genre":"Fantasy","rating":5,"review":"tab\there","request_id":"c-1"}"#,
        #"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Thriller","rating":4}"#,
        #"{"op":"create","learner":"ada","title":"Ἰλιάς \"Α\"","author":"Homer","genre":"Fantasy","rating":5,"review":"tab\there","request_id":"c-1"}"#,
        #"{"op":"update","learner":"ada","id":"\#(ids[1])","rating":2,"expected_version":1,"request_id":"u-1"}"#,
        #"{"op":"update","learner":"ada","id":"\#(ids[1])","rating":9}"#,
        #"{"op":"delete","learner":"ada","id":"\#(ids[0])"}"#,
    ]

    /// The books service over a fresh journal in `directory`, with a clock that ticks one second
    /// per call and ids taken from `ids` in order.
    static func service(journalIn directory: String) throws -> (BooksService, Journal) {
        var state = BooksState()
        let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
        let clock = Mutex<(tick: Int64, id: Int)>((0, 0))
        let environment = ServiceEnvironment(
            now: { clock.withLock { $0.tick += 1000; return 1_796_144_400_000 + $0.tick } },
            makeID: { clock.withLock { $0.id += 1; return ids[$0.id - 1] } })
        return (BooksService(state: state, log: JournalChangeLog(journal: journal), environment: environment), journal)
    }

    @Test func theSameRequestsWriteTheSameJournal() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let (books, journal) = try Self.service(journalIn: data.path)
        for request in Self.requests { _ = books.handle(Array(request.utf8)) }
        journal.close()
        let written = try Data(contentsOf: URL(fileURLWithPath: data.path + "/journal.jsonl"))
        let expected = try Data(contentsOf: URL(fileURLWithPath: Self.fixture))
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func theJournalOfTheEarlierCodeReplays() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: data.path + "/journal.jsonl")
        var state = BooksState()
        let journal = try Journal.open(directory: data.path, options: JournalOptions(durability: .none), state: &state)
        defer { journal.close() }
        #expect(journal.lastSequence == 4)
        let books = BooksService(state: state, log: JournalChangeLog(journal: journal))
        #expect(state.library.count == 1)
        let dune = try parse(books.handle(Array(#"{"op":"get","learner":"ada","id":"\#(Self.ids[1])"}"#.utf8)))
        let book = try #require(dune.result["book"] as? [String: Any])
        #expect(book["rating"] as? Int == 2 && book["version"] as? Int == 2)
        #expect(book["updated_at"] as? String == "2026-12-01T17:00:03.000Z")
        // The ledger replayed too: the update's retry gets its first reply and appends nothing.
        let retry = try parse(books.handle(Array(Self.requests[3].utf8)))
        #expect(retry.isOK && journal.lastSequence == 4)
    }
}
