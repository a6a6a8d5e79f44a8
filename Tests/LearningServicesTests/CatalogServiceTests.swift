import Access
import Catalog
import Foundation
import JSON
import LearningServices
import LearningServicesTestSupport
import LyceumLifecycle
import LyceumTestSupport
import Synchronization
import Testing

@Suite struct CatalogServiceTests {
    let service: CatalogService

    init() throws { service = CatalogService(store: CatalogStore(try Catalog.sample())) }

    @Test func theQuizNeverRevealsTheCorrectAnswers() throws {
        let reply = service.handle(Array(#"{"op":"get_quiz","course":"1"}"#.utf8))
        let text = String(decoding: reply, as: UTF8.self)
        #expect(text.contains("Solve for x"))
        #expect(!text.contains("correct"))
    }

    @Test func listsCoursesWithCountsAndTotals() throws {
        let page = try #require(result(try service.call(#"{"op":"list_courses","category":"Algebra"}"#)))
        #expect(page["courses"] == [[
            "id": "1", "title": "Algebra", "category": "Algebra",
            "description": "Variables, expressions and linear equations, from first principles to word problems.",
            "image": "https://media.lyceum.example/modules/algebra.png", "time": "3 Hours", "total_seconds": 4635,
            "lesson_count": 4, "question_count": 3,
        ]])
        #expect(page["next_cursor"] == .null)
    }

    @Test(arguments: [
        (#"{"op":"get_course","course":"nope"}"#, "not_found", "$.course"),
        (#"{"op":"get_lesson","course":"1","lesson":"99"}"#, "not_found", "$.lesson"),
        (#"{"op":"get_quiz","course":"swiftui-essentials"}"#, "not_found", "$.course"),
        (#"{"op":"get_course","course":"1","verbose":true}"#, "bad_request", "$.verbose"),
        (#"{"op":"search","query":""}"#, "bad_request", "$.query"),
        (#"{"op":"list_courses","limit":1000}"#, "bad_request", "$.limit"),
        (#"{"op":"list_courses","cursor":"00"}"#, "bad_request", "$.cursor"),
        (#"{"op":"drop_tables"}"#, "unknown_op", "$.op"),
        (#"{"op":"list_categories","request_id":"r1"}"#, "bad_request", "$.request_id"),
    ])
    func refusesBadRequests(request: String, code: String, field: String) throws {
        let reply = try service.call(request)
        #expect(errorCode(reply) == code)
        #expect(reply["error"]?["field"] == .string(field))
    }

    /// Issue 40: a category's pages come from its list, made when the catalog is built. Over a
    /// catalog of thousands of interleaved courses they are, byte for byte, what filtering every
    /// course and slicing gave: the same courses, the same summaries, the same cursors.
    @Test(arguments: [1, 37, 100])
    func aCategoryIsPagedExactlyAsFilteringAndSlicingTheCatalog(limit: Int) throws {
        let catalog = try BigCatalog.catalog(courses: 3_000, categories: 7)
        let service = CatalogService(store: CatalogStore(catalog))
        // Each course's summary as the whole catalog's listing gives it, a path without categories.
        var summaries: [String: [UInt8]] = [:]
        var cursor: String?
        repeat {
            let page = try JSONParser().parse(service.handle(Array(Self.listCourses(category: nil, limit: 100, cursor: cursor).utf8)))
            guard case .array(let courses)? = page["result"]?["courses"] else { Issue.record("no courses in \(page)"); return }
            for course in courses { if case .string(let id)? = course["id"] { summaries[id] = course.serialized() } }
            cursor = if case .string(let next)? = page["result"]?["next_cursor"] { next } else { nil }
        } while cursor != nil
        #expect(summaries.count == catalog.courses.count)

        for category in ["Category 3", "Category 6", "nope"] {
            let matching = catalog.courses.filter { $0.category == category }
            var offset = 0
            var cursor: String?
            repeat {
                let reply = service.handle(Array(Self.listCourses(category: category, limit: limit, cursor: cursor).utf8))
                let slice = matching.dropFirst(offset).prefix(limit)
                let next = offset + slice.count < matching.count ? Catalog.cursor(offset: offset + slice.count, scope: .string(category)) : nil
                var expected = Array(#"{"ok":true,"result":{"courses":["#.utf8)
                expected += Array(slice.map { summaries[$0.id] ?? [] }.joined(separator: [UInt8(ascii: ",")]))
                expected += Array(#"],"next_cursor":"#.utf8) + JSONValue(next).serialized() + Array("}}".utf8)
                try #require(reply == expected, "\(category), offset \(offset): \(String(decoding: reply, as: UTF8.self).prefix(300))")
                offset += slice.count
                cursor = next
            } while cursor != nil
            #expect(offset == matching.count)
        }
        // A cursor past a category's end (a client's own offset) is an empty last page.
        let beyond = Catalog.cursor(offset: 1_000_000, scope: .string("Category 3"))
        #expect(result(try service.call(Self.listCourses(category: "Category 3", limit: limit, cursor: beyond))) == ["courses": [], "next_cursor": .null])
    }

    static func listCourses(category: String?, limit: Int, cursor: String?) -> String {
        #"{"op":"list_courses","limit":\#(limit)"# + (category.map { #","category":"\#($0)""# } ?? "")
            + (cursor.map { #","cursor":"\#($0)""# } ?? "") + "}"
    }

    /// Issue 40: with a search queue, a search is ranked on the queue's thread and its reply is,
    /// byte for byte, the one the calling thread computes; a bad search is refused on the calling
    /// thread, before `handleWithCommit` returns; other operations never leave it.
    @Test func aSearchRankedOnTheSearchThreadGivesTheSameBytesAsOnTheCallingThread() throws {
        let catalog = try BigCatalog.catalog(courses: 400)
        let queue = CatalogService.makeSearchQueue()
        let thread = ComponentThread(queue, name: "catalog-search")
        defer { thread.stop() }
        try queue.waitUntilRunning(timeout: .seconds(120))
        let offLoop = CatalogService(store: CatalogStore(catalog), searches: queue)
        let inline = CatalogService(store: CatalogStore(catalog))
        let firstPage = try inline.call(#"{"op":"search","query":"ka"}"#)
        guard case .string(let secondPage)? = firstPage["result"]?["next_cursor"] else { Issue.record("one page of hits: \(firstPage)"); return }
        let requests = [
            #"{"op":"search","query":"ka"}"#, #"{"op":"search","query":"ka","limit":50}"#,
            #"{"op":"search","query":"ka","cursor":"\#(secondPage)"}"#, #"{"op":"search","query":"zzzz"}"#,
            #"{"op":"search","query":"Category 3 lo"}"#, #"{"op":"search","query":"ka","v":1}"#,
        ]
        for request in requests {
            let answered = try Self.answer(offLoop, request)
            #expect(answered.reply == inline.handle(Array(request.utf8)), "\(request)")
            #expect(answered.thread == "catalog-search" && !answered.beforeReturn, "\(request): \(answered.thread)")
            #expect(answered.handled.op == "search" && answered.handled.errorCode == nil)
        }
        for request in [#"{"op":"search","query":""}"#, #"{"op":"search","query":"ka","cursor":"00"}"#, #"{"op":"get_course","course":"c7"}"#] {
            let answered = try Self.answer(offLoop, request)
            #expect(answered.reply == inline.handle(Array(request.utf8)), "\(request)")
            #expect(answered.beforeReturn, "\(request) went to \(answered.thread)")
        }
    }

    /// A search that finds the queue full, or stopping, is answered `unavailable` at once on the
    /// calling thread; one still waiting when the queue stops is answered `unavailable` from the
    /// queue's thread instead of being ranked, so that a stop never waits for a queue of searches.
    @Test func aSearchFindingTheQueueFullOrStoppingIsAnsweredUnavailable() throws {
        let queue = BoundedWorkQueue(capacity: 1)
        let thread = ComponentThread(queue, name: "catalog-search")
        defer { thread.stop() }
        try queue.waitUntilRunning(timeout: .seconds(120))
        let service = CatalogService(store: CatalogStore(try Catalog.sample()), searches: queue)
        // A job that holds the thread until released: the next search waits, the one after finds no room.
        let (release, holding) = (Gate(), Gate())
        #expect(queue.submit { _ in holding.open(); release.wait() } == .queued)
        #expect(holding.wait())
        let waiting = Mutex<(HandledRequest<Never>, String)?>(nil)
        let answered = Gate()
        let search = #"{"op":"search","query":"algebra"}"#
        service.handleWithCommit(Array(search.utf8), caller: .unverified) { handled in
            waiting.withLock { $0 = (handled, Thread.current.name ?? "") }
            answered.open()
        }
        let full = try Self.answer(service, search)
        #expect(full.beforeReturn && full.handled.errorCode == .unavailable && full.handled.operationLabel == "search")
        #expect(try JSONParser().parse(full.reply)["error"]?["message"]
            == .string("the catalog's search queue is full (1 searches wait for its thread); retry after a pause"))

        queue.shutdown()
        let stopping = try Self.answer(service, search)
        #expect(stopping.beforeReturn && stopping.handled.errorCode == .unavailable)
        let stoppingReply = try JSONParser().parse(stopping.reply)
        #expect(stoppingReply["error"]?["message"] == .string("the server is stopping; retry the search"))
        release.open()
        #expect(answered.wait())
        let (told, teller) = try #require(waiting.withLock { $0 })
        #expect(told.reply == stopping.reply && teller == "catalog-search")
        #expect(thread.join() == nil)
    }

    /// What `handleWithCommit` answered `request` with, on which thread, and whether before it returned.
    static func answer(_ service: CatalogService, _ request: String) throws -> (reply: [UInt8], handled: HandledRequest<Never>, thread: String, beforeReturn: Bool) {
        let outcome = Mutex<(HandledRequest<Never>, String)?>(nil)
        let done = Gate()
        let returned = Mutex(false)
        let beforeReturn = Mutex(false)
        service.handleWithCommit(Array(request.utf8), caller: .unverified) { handled in
            beforeReturn.withLock { $0 = !returned.withLock { $0 } }
            outcome.withLock { $0 = (handled, Thread.current.name ?? "") }
            done.open()
        }
        returned.withLock { $0 = true }
        try #require(done.wait(), "no answer to \(request)")
        let (handled, thread) = try #require(outcome.withLock { $0 })
        return (handled.reply, handled, thread, beforeReturn.withLock { $0 })
    }

    @Test func servesANewCatalogAfterAReload() throws {
        let store = CatalogStore(Catalog())
        let service = CatalogService(store: store)
        #expect(result(try service.call(#"{"op":"list_categories"}"#)) == ["categories": []])
        try store.reload(from: [try #require(Catalog.samplePath)])
        #expect(result(try service.call(#"{"op":"get_course","course":"2"}"#))?["course"]?["title"] == "Geometry")
    }

    /// A reload renders the new catalog before it is served (on the reloading thread, not the
    /// first request's); until the swap the old catalog is still answered.
    @Test func aReloadPreparesTheNewCatalogWhileTheOldOneIsServed() throws {
        let store = CatalogStore(Catalog())
        let service = CatalogService(store: store)
        var answeredDuringPreparation: JSONValue?
        try store.reload(from: [try #require(Catalog.samplePath)]) { fresh in
            service.prepare(fresh)
            do { answeredDuringPreparation = try service.call(#"{"op":"list_categories"}"#) } catch { Issue.record("list_categories while a reload prepares: \(error)") }
        }
        #expect(answeredDuringPreparation.flatMap(result) == ["categories": []])
        #expect(result(try service.call(#"{"op":"get_course","course":"2"}"#))?["course"]?["title"] == "Geometry")
        // A second reload, prepared the same way, serves its own copy of the files.
        try store.reload(from: [try #require(Catalog.samplePath)]) { service.prepare($0) }
        #expect(result(try service.call(#"{"op":"get_course","course":"2"}"#))?["course"]?["title"] == "Geometry")
    }
}
