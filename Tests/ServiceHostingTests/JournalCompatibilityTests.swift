import Catalog
import Foundation
import Journal
import LearningServices
import LyceumServer
import LyceumTestSupport
import Synchronization
import Testing

/// The journal's bytes change only where meant: the same books requests, with the clocks and the
/// ids fixed, write exactly `books-recorded.jsonl`, which is the journal the code before the
/// request path's redesign wrote (`books.jsonl`, made by that code) with one addition, the time
/// each request-ledger entry was recorded (its retention is by age); and that earlier journal
/// still replays into the state those requests left.
struct JournalCompatibilityTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/journal-compatibility/books.jsonl").path
    /// What this code writes: the fixture above plus when each ledger entry was recorded.
    static let written = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/journal-compatibility/books-recorded.jsonl").path
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
            makeID: { clock.withLock { $0.id += 1; return ids[$0.id - 1] } }, ledgerClock: { 1_796_144_400_000 })
        return (BooksService(state: state, log: JournalChangeLog(journal: journal), environment: environment), journal)
    }

    @Test func theSameRequestsWriteTheSameJournal() throws {
        try expectJournal(at: Self.written, writtenBy: Self.requests) { try Self.service(journalIn: $0) }
    }

    @Test func theJournalOfTheEarlierCodeReplays() throws {
        let data = try copyOfJournal(at: Self.fixture)
        defer { data.remove() }
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

/// The progress service's journal does not change when its records and replies are written
/// without `JSONValue` (issue 19): the same requests, with the clock fixed, write exactly the
/// journal that the code before that change wrote (`Fixtures/journal-compatibility/progress.jsonl`,
/// made by that code), and that journal replays into the state those requests left.
struct ProgressJournalCompatibilityTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/journal-compatibility/progress.jsonl").path
    /// What this code writes: the fixture above plus when each ledger entry was recorded.
    static let written = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/journal-compatibility/progress-recorded.jsonl").path

    /// Every kind of progress write: positions with and without a fraction, a quiz retried under
    /// its request id, a second attempt that is not the best, a lesson unwatched, a refusal.
    static let requests = [
        #"{"op":"begin_course","learner":"ada","course":"1"}"#,
        #"{"op":"save_position","learner":"ada","course":"1","lesson":"1","position_seconds":42.5}"#,
        #"{"op":"save_position","learner":"ada","course":"1","lesson":"2","position_seconds":7}"#,
        #"{"op":"mark_watched","learner":"ada","course":"1","lesson":"2"}"#,
        #"{"op":"open_lesson","learner":"ada","course":"1","lesson":"3"}"#,
        #"{"op":"submit_quiz","learner":"ada","course":"1","answers":[2,1,1],"request_id":"q-1"}"#,
        #"{"op":"submit_quiz","learner":"ada","course":"1","answers":[2,1,1],"request_id":"q-1"}"#,
        #"{"op":"submit_quiz","learner":"ada","course":"1","answers":[0,0,0]}"#,
        #"{"op":"mark_watched","learner":"grace","course":"2","lesson":"1"}"#,
        #"{"op":"mark_unwatched","learner":"ada","course":"1","lesson":"2"}"#,
        #"{"op":"mark_watched","learner":"ada","course":"1","lesson":"99"}"#,
    ]

    /// The progress service over a fresh journal in `directory`, with a clock that ticks one
    /// second per call.
    static func service(journalIn directory: String) throws -> (ProgressService, Journal) {
        var state = ProgressState()
        let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
        let clock = Mutex<Int64>(0)
        let environment = ServiceEnvironment(
            now: { clock.withLock { $0 += 1000; return 1_796_144_400_000 + $0 } }, makeID: { "unused" },
            ledgerClock: { 1_796_144_400_000 })
        let service = ProgressService(
            state: state, catalog: CatalogStore(try Catalog.sample()), log: JournalChangeLog(journal: journal), environment: environment)
        return (service, journal)
    }

    @Test func theSameRequestsWriteTheSameJournal() throws {
        try expectJournal(at: Self.written, writtenBy: Self.requests) { try Self.service(journalIn: $0) }
    }

    @Test func theJournalOfTheEarlierCodeReplays() throws {
        let data = try copyOfJournal(at: Self.fixture)
        defer { data.remove() }
        let (progress, journal) = try Self.service(journalIn: data.path)
        defer { journal.close() }
        let sequence = journal.lastSequence
        let detail = try parse(progress.handle(Array(#"{"op":"get","learner":"ada","course":"1"}"#.utf8)))
        let record = try #require(detail.result["progress"] as? [String: Any])
        #expect(record["watched_count"] as? Int == 0 && record["current_lesson"] as? String == "3")
        #expect((record["best_attempt"] as? [String: Any])?["score"] as? Int == 2)
        #expect((record["latest_attempt"] as? [String: Any])?["score"] as? Int == 1)
        let positions = try #require(record["positions"] as? [[String: Any]])
        #expect(positions.map { $0["lesson"] as? String } == ["1", "2"] && positions.map { $0["seconds"] as? Double } == [42.5, 7])
        // The ledger replayed too: the quiz's retry gets its first reply and appends nothing.
        let retry = try parse(progress.handle(Array(Self.requests[5].utf8)))
        #expect(retry.isOK && (retry.result["score"] as? Int) == 2 && journal.lastSequence == sequence)
    }
}

/// Expects `requests`, handled in order by the service that `open` makes over a fresh journal in
/// the directory it is given, to write exactly the journal at `fixture`.
private func expectJournal(
    at fixture: String, writtenBy requests: [String], _ open: (String) throws -> (some LearningService, Journal)
) throws {
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let (service, journal) = try open(data.path)
    for request in requests { _ = service.handle(Array(request.utf8)) }
    journal.close()
    let written = try Data(contentsOf: URL(fileURLWithPath: data.path + "/journal.jsonl"))
    let expected = try Data(contentsOf: URL(fileURLWithPath: fixture))
    #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
}

/// A temporary directory holding a copy of the journal at `fixture`, for a test to replay.
private func copyOfJournal(at fixture: String) throws -> TemporaryDirectory {
    let data = try TemporaryDirectory()
    do {
        try FileManager.default.copyItem(atPath: fixture, toPath: data.path + "/journal.jsonl")
    } catch {
        data.remove()
        throw error
    }
    return data
}
