import Books
import Catalog
import Foundation
import JSON
import LearningServices
import LearningServicesTestSupport
import Progress
import Synchronization
import Testing

/// `handle(_:reply:)` and `handleWithCommit(_:completion:)`: one reply per request, writes
/// answered only once the log calls back, events only for durable changes.
@Suite struct AsynchronousReplyTests {
    let dune = #"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#

    @Test func aWriteIsAnsweredOnceWhenItsRecordBecomesDurable() throws {
        let log = GatedLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let replies = ReplyCollector()
        service.handle(Array(dune.utf8)) { replies.add("create", $0) }
        #expect(replies.count("create") == 0, "a write replied before it was durable")
        #expect(log.waitingCount == 1)
        log.release()
        #expect(replies.count("create") == 1)
        let reply = try JSONParser().parse(try #require(replies.first("create")))
        #expect(result(reply)?["book"]?["title"] == "Dune")
    }

    @Test func readsAndRefusalsAreAnsweredOnTheCallingThreadBeforeHandleReturns() throws {
        let log = GatedLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        service.handle(Array(dune.utf8)) { _ in }
        let caller = pthread_self()
        let requests = [
            ("list", #"{"op":"list","learner":"ada"}"#), ("not found", #"{"op":"get","learner":"ada","id":"nope"}"#),
            ("bad", "not json"), ("unknown", #"{"op":"burn","learner":"ada"}"#),
            ("invalid write", #"{"op":"create","learner":"ada","title":"","author":"A","genre":"Fantasy","rating":5}"#),
        ]
        for (name, request) in requests {
            let onCaller = Mutex<Bool?>(nil)
            service.handle(Array(request.utf8)) { _ in onCaller.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 } }
            #expect(onCaller.withLock { $0 } == true, "\(name)")
        }
        #expect(log.waitingCount == 1)
    }

    /// 200 writes from four threads while the log turns durable half-way: every request gets
    /// exactly one reply, each a success.
    @Test func everyRequestIsAnsweredExactlyOnce() throws {
        let log = GatedLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let replies = ReplyCollector()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in 0..<50 {
                if worker == 0 && index == 25 { log.release() }
                service.handle(Array(#"{"op":"create","learner":"w\#(worker)","title":"T\#(index)","author":"A","genre":"Kids","rating":3}"#.utf8)) {
                    replies.add("\(worker)-\(index)", $0)
                }
            }
        }
        let keys = (0..<4).flatMap { worker in (0..<50).map { "\(worker)-\($0)" } }
        #expect(keys.allSatisfy { replies.count($0) == 1 }, "\(keys.filter { replies.count($0) != 1 }.prefix(5))")
        #expect(try keys.allSatisfy { try JSONParser().parse(replies.first($0) ?? [])["ok"] == true })
    }

    @Test func bookWritesGiveTheirEventsWithTheirTickets() throws {
        let service = BooksService(log: InMemoryChangeLog(), environment: deterministicEnvironment())
        let created = service.handleWithCommit(Array(dune.utf8))
        let id = "00000000-0000-4000-8000-000000000001"
        let book = try #require(created.event?.book)
        #expect(created.event == BookEvent(kind: .created, learner: "ada", bookID: id, book: book))
        #expect(book.title == "Dune" && book.version == 1)
        #expect(created.commit?.sequence == 1)

        let updated = service.handleWithCommit(Array(#"{"op":"update","learner":"ada","id":"\#(id)","rating":4}"#.utf8))
        #expect(updated.event?.kind == .updated && updated.event?.bookID == id && updated.event?.learner == "ada")
        #expect(updated.event?.book?.rating == 4 && updated.event?.book?.version == 2)
        #expect(updated.commit?.sequence == 2)

        let deleted = service.handleWithCommit(Array(#"{"op":"delete","learner":"ada","id":"\#(id)"}"#.utf8))
        #expect(deleted.event == BookEvent(kind: .deleted, learner: "ada", bookID: id, book: nil))
        #expect(deleted.commit?.sequence == 3)

        for read in [#"{"op":"list","learner":"ada"}"#, #"{"op":"get","learner":"ada","id":"\#(id)"}"#] {
            let handled = service.handleWithCommit(Array(read.utf8))
            #expect(handled.event == nil && handled.commit == nil)
        }
    }

    @Test func failedWritesGiveAnErrorReplyAndNoEvent() throws {
        let refusing = InMemoryChangeLog()
        refusing.isRefusingAppends = true
        let full = BooksService(log: refusing, environment: deterministicEnvironment())
        let refused = full.handleWithCommit(Array(dune.utf8))
        #expect(errorCode(try JSONParser().parse(refused.reply)) == "unavailable")
        #expect(refused.event == nil && refused.commit == nil)

        let undurable = BooksService(log: FailingDurabilityLog(), environment: deterministicEnvironment())
        let lost = undurable.handleWithCommit(Array(dune.utf8))
        #expect(errorCode(try JSONParser().parse(lost.reply)) == "unavailable")
        #expect(lost.event == nil && lost.commit == nil)

        let service = BooksService(log: InMemoryChangeLog(), environment: deterministicEnvironment())
        let missing = service.handleWithCommit(Array(#"{"op":"update","learner":"ada","id":"nope","rating":4}"#.utf8))
        #expect(errorCode(try JSONParser().parse(missing.reply)) == "not_found")
        #expect(missing.event == nil && missing.commit == nil)
    }

    @Test func aRetriedWriteGetsTheOriginalReplyAndNoEvent() throws {
        let service = BooksService(log: InMemoryChangeLog(), environment: deterministicEnvironment())
        let request = Array(#"{"op":"create","learner":"ada","request_id":"r-1","title":"Dune","author":"F","genre":"Fantasy","rating":5}"#.utf8)
        let first = service.handleWithCommit(request)
        #expect(first.event?.kind == .created)
        let retried = service.handleWithCommit(request)
        #expect(retried.reply == first.reply)
        #expect(retried.event == nil)
        #expect(retried.commit == first.commit, "a retry depends on the last record appended before it")
    }

    /// The retry of a write still waiting for durability waits with it, and neither completes
    /// before the log says the record is durable.
    @Test func aRetryCompletesOnlyWithTheDurabilityOfTheOriginal() throws {
        let log = GatedLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let request = Array(#"{"op":"create","learner":"ada","request_id":"r-1","title":"Dune","author":"F","genre":"Fantasy","rating":5}"#.utf8)
        let replies = ReplyCollector()
        service.handle(request) { replies.add("original", $0) }
        service.handle(request) { replies.add("retry", $0) }
        #expect(replies.count("original") == 0 && replies.count("retry") == 0)
        log.release()
        #expect(replies.count("original") == 1 && replies.count("retry") == 1)
        #expect(replies.first("retry") == replies.first("original"))
    }

    @Test func aProgressEventIsHandedOutOnlyOnceItsWriteIsDurable() throws {
        let log = GatedLog()
        let service = ProgressService(catalog: CatalogStore(try Catalog.sample()), log: log, environment: deterministicEnvironment())
        let events = Mutex<[ProgressEvent]>([])
        service.handleWithCommit(Array(#"{"op":"mark_watched","learner":"ada","course":"2","lesson":"1"}"#.utf8), caller: .unverified) { handled in
            if let event = handled.event, handled.commit != nil { events.withLock { $0.append(event) } }
        }
        #expect(events.withLock { $0.isEmpty })
        log.release()
        #expect(events.withLock { $0.map(\.kind) } == [.lessonWatched])
    }
}

/// Reply frames by request name, as they arrive from any thread.
private final class ReplyCollector: Sendable {
    private let replies = Mutex<[String: [[UInt8]]]>([:])

    func add(_ name: String, _ reply: [UInt8]) { replies.withLock { $0[name, default: []].append(reply) } }
    func count(_ name: String) -> Int { replies.withLock { $0[name]?.count ?? 0 } }
    func first(_ name: String) -> [UInt8]? { replies.withLock { $0[name]?.first } }
}
