import Catalog
import JSON
import Journal
import LearningServices
import LearningServicesTestSupport
import Testing

/// Issue 14, finding 3c: list replies stop at a byte budget as well as at `limit`, and the
/// cursor they return continues where they stopped, so nothing is lost or repeated.
@Suite struct ReplyPagingTests {
    /// Every page of `first` and the requests its cursors lead to, as (reply bytes, result).
    func pages(_ service: any LearningService, _ first: String, cursorMember: (String) -> String) throws -> [(bytes: Int, result: JSONValue)] {
        var pages: [(Int, JSONValue)] = []
        var request = first
        while true {
            let reply = service.handle(Array(request.utf8))
            let page = try #require(result(try JSONParser().parse(reply)), "\(String(decoding: reply.prefix(300), as: UTF8.self))")
            pages.append((reply.count, page))
            guard case .string(let cursor)? = page["next_cursor"] else { return pages }
            request = cursorMember(cursor)
            #expect(pages.count < 1_000)
        }
    }

    func ids(_ items: JSONValue?, _ key: (JSONValue) -> JSONValue?) -> [String] {
        guard case .array(let elements)? = items else { return [] }
        return elements.compactMap { if case .string(let id)? = key($0) { id } else { nil } }
    }

    @Test func aLibraryOfSeveralMegabytesComesBackInPagesWithinTheBudget() throws {
        let service = BooksService(log: InMemoryChangeLog(), environment: deterministicEnvironment())
        // 400 books with 4,000-character reviews of 3-byte characters: about 4.9 MB in all.
        let review = String(repeating: "語", count: 4_000)
        for index in 0..<400 {
            let title = ["Émile", "dune", "Zorba", "Ångström"][index % 4] + " \(index)"
            let created = try service.call(#"{"op":"create","learner":"ada","title":"\#(title)","author":"A","genre":"Kids","rating":3,"review":"\#(review)"}"#)
            #expect(result(created) != nil)
        }
        for sort in ["title", "created"] {
            let first = #"{"op":"list","learner":"ada","sort":"\#(sort)","limit":100}"#
            let pages = try pages(service, first) { #"{"op":"list","learner":"ada","sort":"\#(sort)","limit":100,"cursor":"\#($0)"}"# }
            let listed = pages.flatMap { ids($0.result["books"]) { $0["id"] } }
            #expect(listed.count == 400)
            #expect(Set(listed).count == 400)
            #expect(pages.count > 4)
            for page in pages {
                // The items stay within 256 KiB; the envelope and cursor add well under 1 KiB.
                #expect(page.bytes <= ReplyBudget.standard.maxBytes + 1_024)
                #expect((page.result["books"]?.arrayCount ?? 0) >= 1)
            }
        }
    }

    @Test func aBookLargerThanTheBudgetStillComesAloneOnItsPage() throws {
        let service = BooksService(log: InMemoryChangeLog(), environment: deterministicEnvironment(), budget: ReplyBudget(maxBytes: 4_096))
        for _ in 0..<3 {
            _ = try service.call(#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Kids","rating":3,"review":"\#(String(repeating: "x", count: 4_000))"}"#)
        }
        let pages = try pages(service, #"{"op":"list","learner":"ada"}"#) { #"{"op":"list","learner":"ada","cursor":"\#($0)"}"# }
        #expect(pages.map { $0.result["books"]?.arrayCount } == [1, 1, 1])
    }

    @Test func catalogListsAndSearchesPageByBytesWithoutLosingAnything() throws {
        let store = CatalogStore(try Catalog.sample())
        let whole = CatalogService(store: store)
        let tiny = CatalogService(store: store, budget: ReplyBudget(maxBytes: 1))
        let courseID: (JSONValue) -> JSONValue? = { $0["id"] }
        let all = ids(result(try whole.call(#"{"op":"list_courses","limit":100}"#))?["courses"], courseID)
        let paged = try pages(tiny, #"{"op":"list_courses","limit":100}"#) { #"{"op":"list_courses","limit":100,"cursor":"\#($0)"}"# }
        #expect(all.count > 2)
        #expect(paged.flatMap { ids($0.result["courses"], courseID) } == all)
        #expect(paged.count == all.count)

        let hitID: (JSONValue) -> JSONValue? = { $0["course"]?["id"] }
        let hits = ids(result(try whole.call(#"{"op":"search","query":"e","limit":50}"#))?["hits"], hitID)
        let pagedHits = try pages(tiny, #"{"op":"search","query":"e","limit":50}"#) { #"{"op":"search","query":"e","limit":50,"cursor":"\#($0)"}"# }
        #expect(hits.count > 2)
        #expect(pagedHits.flatMap { ids($0.result["hits"], hitID) } == hits)
        // A search cursor belongs to its query.
        let cursor = try #require(pagedHits.first?.result["next_cursor"])
        let other = try tiny.call(#"{"op":"search","query":"a","cursor":\#(String(decoding: cursor.serialized(), as: UTF8.self))}"#)
        #expect(errorCode(other) == "bad_request" && other["error"]?["field"] == "$.cursor")
        // A forged offset past every course, however large, gives an empty last page.
        guard case .string(let text) = cursor, var parts = PageCursor.decode(text) else { throw CursorError() }
        parts[0] = .integer(Int.max)
        let forged = try tiny.call(#"{"op":"search","query":"e","cursor":"\#(PageCursor.encode(parts))"}"#)
        #expect(result(forged) == ["hits": [], "next_cursor": .null])
    }

    @Test func progressListsPageByBytesMostRecentFirst() throws {
        let store = CatalogStore(try Catalog.sample())
        let log = InMemoryChangeLog()
        let whole = ProgressService(catalog: store, log: log, environment: deterministicEnvironment())
        for course in ["1", "2", "music-theory-basics"] {
            #expect(result(try whole.call(#"{"op":"begin_course","learner":"ada","course":"\#(course)"}"#)) != nil)
        }
        let tiny = ProgressService(state: whole.currentState, catalog: store, log: log, budget: ReplyBudget(maxBytes: 1))
        let courseOf: (JSONValue) -> JSONValue? = { $0["course"] }
        let all = ids(result(try whole.call(#"{"op":"list","learner":"ada"}"#))?["courses"], courseOf)
        #expect(all == ["music-theory-basics", "2", "1"])
        let paged = try pages(tiny, #"{"op":"list","learner":"ada"}"#) { #"{"op":"list","learner":"ada","cursor":"\#($0)"}"# }
        #expect(paged.flatMap { ids($0.result["courses"], courseOf) } == all)
        #expect(errorCode(try tiny.call(#"{"op":"list","learner":"ada","cursor":"7a"}"#)) == "bad_request")
    }
}

struct CursorError: Error {}

/// Issue 14, finding 4: every string a service reads is held to bytes and Unicode scalars as
/// well as characters, with a `bad_request` naming the field and the limit, and nothing changes.
@Suite struct StringLimitTests {
    let accents = String(repeating: "\u{301}", count: 30_000)

    @Test func aOneCharacterSixtyKilobyteTitleIsRefusedAndNothingChanges() throws {
        let log = InMemoryChangeLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let reply = try service.call(#"{"op":"create","learner":"ada","title":"e\#(accents)","author":"A","genre":"Kids","rating":3}"#)
        #expect(errorCode(reply) == "bad_request")
        #expect(reply["error"]?["field"] == "$.title")
        #expect(reply["error"]?["message"] == "$.title must be at most 1600 bytes of UTF-8")
        #expect(log.records.isEmpty)
        #expect(result(try service.call(#"{"op":"list","learner":"ada"}"#))?["books"]?.arrayCount == 0)
    }

    // Strings of five scalars (nine bytes) a character break the scalar limit before the byte limit.
    @Test(arguments: [
        ("books", #"{"op":"get","learner":"ada","id":"\#(String(repeating: "a", count: 65))"}"#, "$.id", "must be at most 64 characters"),
        ("books", #"{"op":"list","learner":"ada","author":"\#(String(repeating: "a\u{301}\u{302}\u{303}\u{304}", count: 97))"}"#, "$.author", "must be at most 480 Unicode scalars"),
        ("catalog", #"{"op":"search","query":"\#(String(repeating: "e\u{301}\u{302}\u{303}\u{304}", count: 161))"}"#, "$.query", "must be at most 800 Unicode scalars"),
        ("catalog", #"{"op":"get_course","course":"\#(String(repeating: "é", count: 65))"}"#, "$.course", "must be at most 64 characters"),
        ("progress", #"{"op":"mark_watched","learner":"ada","course":"1","lesson":"\#(String(repeating: "1\u{301}\u{302}\u{303}\u{304}", count: 52))"}"#, "$.lesson", "must be at most 256 Unicode scalars"),
        ("progress", #"{"op":"get","learner":"ada","course":"1\#(String(repeating: "🦉", count: 130))"}"#, "$.course", "must be at most 512 bytes of UTF-8"),
    ])
    func everyServiceRefusesCostlyStringsNamingTheField(service name: String, request: String, field: String, message: String) throws {
        let store = CatalogStore(try Catalog.sample())
        let log = InMemoryChangeLog()
        let service: any LearningService = switch name {
        case "books": BooksService(log: log, environment: deterministicEnvironment())
        case "catalog": CatalogService(store: store)
        default: ProgressService(catalog: store, log: log, environment: deterministicEnvironment())
        }
        let reply = try service.call(request)
        #expect(errorCode(reply) == "bad_request")
        #expect(reply["error"]?["field"] == .string(field))
        #expect(reply["error"]?["message"] == .string("\(field) \(message)"))
        #expect(log.records.isEmpty)
    }
}
