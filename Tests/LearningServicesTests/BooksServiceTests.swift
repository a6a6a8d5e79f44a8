import Synchronization
import Books
import JSON
import Journal
import LearningServices
import LearningServicesTestSupport
import Testing

@Suite struct BooksServiceTests {
    let log = InMemoryChangeLog()
    let service: BooksService

    init() {
        service = BooksService(log: log, environment: deterministicEnvironment())
    }

    let dune = #"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#

    @Test func createsGetsUpdatesListsAndDeletes() throws {
        let created = try service.call(dune)
        #expect(result(created)?["book"]?["id"] == "00000000-0000-4000-8000-000000000001")
        #expect(result(created)?["book"]?["version"] == 1)
        #expect(result(created)?["book"]?["created_at"] == "2026-01-05T09:00:00.000Z")
        let id = "00000000-0000-4000-8000-000000000001"

        let updated = try service.call(#"{"op":"update","learner":"ada","id":"\#(id)","rating":4,"review":"Ἀλήθεια 🦉","expected_version":1}"#)
        #expect(result(updated)?["book"]?["version"] == 2)
        #expect(result(updated)?["book"]?["review"] == "Ἀλήθεια 🦉")
        let stale = try service.call(#"{"op":"update","learner":"ada","id":"\#(id)","rating":3,"expected_version":1}"#)
        #expect(errorCode(stale) == "conflict")

        let listed = try service.call(#"{"op":"list","learner":"ada","sort":"title","order":"desc"}"#)
        #expect(result(listed)?["books"]?.arrayCount == 1)
        #expect(try service.call(#"{"op":"get","learner":"grace","id":"\#(id)"}"#)["error"]?["code"] == "not_found")

        #expect(result(try service.call(#"{"op":"delete","learner":"ada","id":"\#(id)"}"#)) == ["deleted": .string(id)])
        #expect(errorCode(try service.call(#"{"op":"get","learner":"ada","id":"\#(id)"}"#)) == "not_found")
        #expect(log.records.count == 3)
    }

    @Test(arguments: [
        ("not json", "bad_request", nil),
        ("[1,2]", "bad_request", "$"),
        (#"{"learner":"ada"}"#, "bad_request", "$.op"),
        (#"{"op":"burn","learner":"ada"}"#, "unknown_op", "$.op"),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Fantasy","rating":5,"color":"red"}"#, "bad_request", "$.color"),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Fantasy"}"#, "bad_request", "$.rating"),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Fantasy","rating":"5"}"#, "bad_request", "$.rating"),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Fantasy","rating":6}"#, "bad_request", "$.rating"),
        (#"{"op":"create","learner":"ada","title":"","author":"A","genre":"Fantasy","rating":5}"#, "bad_request", "$.title"),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"SciFi","rating":5}"#, "bad_request", "$.genre"),
        (#"{"op":"create","learner":"a/b","title":"T","author":"A","genre":"Fantasy","rating":5}"#, "bad_request", "$.learner"),
        (#"{"op":"create","v":5,"learner":"ada","title":"T","author":"A","genre":"Fantasy","rating":5}"#, "bad_request", "$.v"),
        (#"{"op":"update","learner":"ada","id":"x"}"#, "bad_request", nil),
        (#"{"op":"list","learner":"ada","sort":"color"}"#, "bad_request", "$.sort"),
        (#"{"op":"list","learner":"ada","limit":0}"#, "bad_request", "$.limit"),
        (#"{"op":"list","learner":"ada","cursor":"zz"}"#, "bad_request", "$.cursor"),
        (#"{"op":"get","learner":"ada","id":"x","request_id":"r1"}"#, "bad_request", "$.request_id"),
    ] as [(String, String, String?)])
    func refusesBadInputWithAStructuredErrorAndChangesNothing(request: String, code: String, field: String?) throws {
        let reply = try service.call(request)
        #expect(reply["ok"] == false)
        #expect(errorCode(reply) == code)
        #expect(reply["error"]?["field"] == field.map(JSONValue.string))
        #expect(log.records.isEmpty)
    }

    @Test func refusesBinaryFrames() throws {
        for frame: [UInt8] in [[0xFF, 0xFE, 0x00, 0x01], [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], []] {
            let reply = try JSONParser().parse(service.handle(frame))
            #expect(errorCode(reply) == "bad_request")
        }
        #expect(log.records.isEmpty)
    }

    @Test func refusesHugeStringsAndFrames() throws {
        let longTitle = String(repeating: "é", count: 201)
        let reply = try service.call(#"{"op":"create","learner":"ada","title":"\#(longTitle)","author":"A","genre":"Fantasy","rating":5}"#)
        #expect(reply["error"]?["field"] == "$.title")
        let huge = String(repeating: "x", count: 70_000)
        #expect(errorCode(try service.call(#"{"op":"create","learner":"ada","title":"\#(huge)"}"#)) == "too_large")
        #expect(log.records.isEmpty)
    }

    @Test func aFullDiskGetsUnavailableAndChangesNothing() throws {
        log.isRefusingAppends = true
        #expect(errorCode(try service.call(dune)) == "unavailable")
        log.isRefusingAppends = false
        #expect(result(try service.call(#"{"op":"list","learner":"ada"}"#))?["books"] == [])
    }

    @Test func retriedWritesReturnTheOriginalReplyEvenAfterARestart() throws {
        let request = #"{"op":"create","learner":"ada","request_id":"r-1","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#
        let first = service.handle(Array(request.utf8))
        #expect(service.handle(Array(request.utf8)) == first)
        let reordered = #"{"request_id":"r-1", "op":"create","learner":"ada","rating":5,"title":"Dune","author":"Frank Herbert","genre":"Fantasy"}"#
        #expect(service.handle(Array(reordered.utf8)) == first)
        let reused = try service.call(#"{"op":"create","learner":"ada","request_id":"r-1","title":"Emma","author":"Jane Austen","genre":"Romance","rating":4}"#)
        #expect(errorCode(reused) == "conflict")

        var replayed = BooksState()
        for change in log.changes { try replayed.apply(change) }
        let restarted = BooksService(state: replayed, log: log, environment: deterministicEnvironment())
        #expect(restarted.handle(Array(request.utf8)) == first)
        #expect(replayed.library.count == 1)

        var compacted = BooksState()
        for change in replayed.snapshot() { try compacted.apply(change) }
        #expect(BooksService(state: compacted, log: log).handle(Array(request.utf8)) == first)
    }

    /// A copy of a create can reach the worker long after the client retried it elsewhere and
    /// went on writing (a broker hands over what it queued while the worker was unreachable):
    /// within `RequestLedger.retention` it must get the original reply, however many writes of
    /// the same learner came in between (a cluster test applied such copies twice at 64).
    @Test func aLateCopyAfterManyLaterWritesGetsTheOriginalReply() throws {
        let first = #"{"op":"create","learner":"ada","request_id":"r0","title":"T0","author":"A","genre":"Kids","rating":3}"#
        let original = try service.call(first)
        for index in 1...(RequestLedger.retainedPerLearner + 100) {
            let reply = try service.call(
                #"{"op":"create","learner":"ada","request_id":"r\#(index)","title":"T\#(index)","author":"A","genre":"Kids","rating":3}"#)
            #expect(reply["ok"] == true)
        }
        #expect(try service.call(first) == original)
        var replayed = BooksState()
        for change in log.changes { try replayed.apply(change) }
        #expect(replayed.library.count == RequestLedger.retainedPerLearner + 101)
        #expect(replayed.ledger.count == RequestLedger.retainedPerLearner + 101)
    }

    /// Young entries are kept up to `maximumPerLearner`; once a learner holds
    /// `retainedPerLearner` and its oldest entry is past `retention`, each new one replaces it.
    @Test func theLedgerKeepsABoundedNumberOfRequestIDsPerLearner() throws {
        let clock = Mutex<Int64>(1_767_603_600_000)
        let fixed = deterministicEnvironment()
        let aging = BooksService(
            log: log, environment: ServiceEnvironment(now: fixed.now, makeID: fixed.makeID, ledgerClock: { clock.withLock { $0 } }))
        func create(_ learner: String, _ index: Int) throws {
            let reply = try aging.call(
                #"{"op":"create","learner":"\#(learner)","request_id":"r\#(index)","title":"T\#(index)","author":"A","genre":"Kids","rating":3}"#)
            #expect(reply["ok"] == true)
        }
        for index in 0..<(RequestLedger.maximumPerLearner + 5) { try create("ada", index) }
        #expect(aging.currentState.ledger.count == RequestLedger.maximumPerLearner)

        for index in 0..<(RequestLedger.retainedPerLearner + 10) { try create("bob", index) }
        #expect(aging.currentState.ledger.count == RequestLedger.maximumPerLearner + RequestLedger.retainedPerLearner + 10)
        clock.withLock { $0 += RequestLedger.retention }
        for index in 100..<110 { try create("bob", index) }
        // bob's ten oldest went, one per write; ada, who wrote nothing since, keeps hers.
        #expect(aging.currentState.ledger.count == RequestLedger.maximumPerLearner + RequestLedger.retainedPerLearner + 10)

        var replayed = BooksState()
        for change in log.changes { try replayed.apply(change) }
        #expect(replayed.ledger.count == aging.currentState.ledger.count)
        #expect(replayed.library.count == RequestLedger.maximumPerLearner + 5 + RequestLedger.retainedPerLearner + 20)
    }

    /// Writes store the book they planned without decoding its journal record (issue 19); the
    /// state must still be exactly what replaying that record gives, for every kind of text,
    /// and for a book journaled by an older build with an id spelled in uppercase.
    @Test func theStateAWriteLeavesIsTheStateItsRecordsReplayTo() throws {
        let spelled = Book(
            id: "ABCDEF00-0000-4000-8000-00000000000A", learner: "ada", title: "Old", author: "Older", genre: .kids, rating: 2,
            review: "", version: 1, createdAt: 1_767_603_000_000, updatedAt: 1_767_603_000_000)
        let seeded = JournalChange.put(BookLibrary.collection, key: "ada/" + spelled.id, value: spelled.journalValue())
        var seededState = BooksState()
        try seededState.apply(seeded)
        let log = InMemoryChangeLog()
        let service = BooksService(state: seededState, log: log, environment: deterministicEnvironment())
        for (index, title) in ["Dune", "Ἀλήθεια 🦉", #"Quote \" and \\ and \n"#, "émile", "ZEBRA"].enumerated() {
            let created = try service.call(
                #"{"op":"create","learner":"l\#(index % 2)","title":"\#(title)","author":"A\#(index)","genre":"Kids","rating":\#(index % 5 + 1)}"#)
            guard case .string(let id)? = result(created)?["book"]?["id"] else {
                Issue.record("create \(index) was refused: \(created)")
                return
            }
            let updated = try service.call(#"{"op":"update","learner":"l\#(index % 2)","id":"\#(id)","review":"r\#(index) 🦉","title":"T\#(title)"}"#)
            #expect(updated["ok"] == true)
        }
        #expect(try service.call(#"{"op":"update","learner":"ada","id":"\#(spelled.id)","rating":5}"#)["ok"] == true)

        var replayed = BooksState()
        for change in [seeded] + log.changes { try replayed.apply(change) }
        let live = service.currentState
        #expect(live.library.count == 6)
        #expect(live.library.count == replayed.library.count)
        let order = { (a: JournalChange, b: JournalChange) in a.key < b.key }
        #expect(live.snapshot().sorted(by: order) == replayed.snapshot().sorted(by: order))
        #expect(live.library.book(spelled.id, of: "ada")?.id == spelled.id)
    }

    @Test func handlesConcurrentCallersWithoutLosingWrites() async throws {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<50 {
                        _ = service.handle(Array(
                            #"{"op":"create","learner":"w\#(worker)","title":"T\#(index)","author":"A","genre":"Kids","rating":3}"#.utf8))
                    }
                }
            }
        }
        var replayed = BooksState()
        for change in log.changes { try replayed.apply(change) }
        #expect(replayed.library.count == 200)
    }
}

extension JSONValue {
    var arrayCount: Int? {
        if case .array(let elements) = self { return elements.count }
        return nil
    }
}

@Suite struct CompactionTests {
    @Test func theCurrentStateSnapshotsEveryAppliedWrite() throws {
        let log = InMemoryChangeLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        _ = try service.call(#"{"op":"create","learner":"ada","request_id":"a","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        let snapshot = service.currentState.snapshot()
        _ = try service.call(#"{"op":"create","learner":"ada","title":"Emma","author":"Jane Austen","genre":"Romance","rating":4}"#)
        var rebuilt = BooksState()
        for change in snapshot { try rebuilt.apply(change) }
        #expect(rebuilt.library.count == 1 && rebuilt.ledger.count == 1)
        #expect(service.currentState.library.count == 2)
    }
}
