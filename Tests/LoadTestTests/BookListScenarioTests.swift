import JSON
@testable import LoadTest
import Testing

/// The `book-list` scenario: the `books list` requests it builds, the cursors it follows or
/// keeps, what `--verify` accepts of a page, and setup's cursor to `--list-page`.
@Suite(.serialized) struct BookListScenarioTests {
    private static let workload = Workload(courses: [], books: [], learners: ["ada", "grace"], seed: 1,
                                           pageCursors: ["ada": "to-page-3-of-ada", "grace": "to-page-3-of-grace"])

    private static func planner(connection: Int, listing: BookListing, verify: Bool = false) throws -> RequestPlanner {
        RequestPlanner(workload: workload, mix: try ScenarioMix(parsing: "book-list"), verify: verify, connection: connection, listing: listing)
    }

    /// A `books list` reply with `count` books and `cursor` (null without one).
    private static func page(_ count: Int, cursor: String?) -> [[UInt8]] {
        let books = (0..<count).map { index -> JSONValue in ["id": .string("book-\(index)"), "title": "T"] }
        let result: JSONValue = ["books": .array(books), "next_cursor": cursor.map { .string($0) } ?? .null]
        return [(["ok": true, "result": result] as JSONValue).serialized()]
    }

    private static func request(_ planned: PlannedRequest) throws -> JSONValue {
        #expect(planned.scenario == .bookList && planned.scenario.service == "books")
        return try JSONParser().parse(planned.body[0])
    }

    @Test func requestsNameTheLearnerSortAndLimitAndACursorOnlyWhenThereIsOne() {
        let listing = BookListing(sort: "rating", limit: 50)
        #expect(listing.request(learner: "ada", cursor: nil) == ["op": "list", "learner": "ada", "sort": "rating", "limit": 50])
        #expect(listing.request(learner: "ada", cursor: "c") == ["op": "list", "learner": "ada", "sort": "rating", "limit": 50, "cursor": "c"])
        #expect(BookListing.nextCursor(of: ["books": [], "next_cursor": "c"]) == "c")
        #expect(BookListing.nextCursor(of: ["books": [], "next_cursor": nil]) == nil)
    }

    @Test func followingCursorsStartsOverAfterTheLastPageAndAfterAnError() throws {
        // Connection 3 of two learners lists the second one's library.
        var planner = try Self.planner(connection: 3, listing: BookListing(sort: "title", limit: 2))
        let first = planner.next()
        #expect(try Self.request(first) == ["op": "list", "learner": "grace", "sort": "title", "limit": 2])
        #expect(planner.judge(Self.page(2, cursor: "after-2"), for: first) == .success)
        let second = planner.next()
        #expect(try Self.request(second)["cursor"] == "after-2")
        #expect(planner.judge(Self.page(2, cursor: "after-4"), for: second) == .success)
        let third = planner.next()
        #expect(try Self.request(third)["cursor"] == "after-4")
        // The last page: the next request is the first page again.
        #expect(planner.judge(Self.page(1, cursor: nil), for: third) == .success)
        let again = planner.next()
        #expect(try Self.request(again)["cursor"] == nil)
        #expect(planner.judge(Self.page(2, cursor: "after-2"), for: again) == .success)
        // A refused cursor is not sent again.
        let refused = planner.next()
        let error: JSONValue = ["ok": false, "error": ["code": "bad_request", "message": "$.cursor is not a cursor of this list"]]
        #expect(planner.judge([error.serialized()], for: refused) == .error(code: "bad_request"))
        #expect(planner.listCursor == nil)
        #expect(try Self.request(planner.next())["cursor"] == nil)
    }

    @Test func onePageIsListedAgainAndAgainWhateverTheRepliesSay() throws {
        var third = try Self.planner(connection: 0, listing: BookListing(limit: 2, page: 3))
        for _ in 0..<3 {
            let planned = third.next()
            #expect(try Self.request(planned) == ["op": "list", "learner": "ada", "sort": "created", "limit": 2, "cursor": "to-page-3-of-ada"])
            #expect(third.judge(Self.page(2, cursor: "after-6"), for: planned) == .success)
        }
        var first = try Self.planner(connection: 1, listing: BookListing(limit: 2, page: 1))
        for _ in 0..<2 {
            let planned = first.next()
            #expect(try Self.request(planned)["cursor"] == nil)
            #expect(first.judge(Self.page(2, cursor: "after-2"), for: planned) == .success)
        }
    }

    @Test func verifyAcceptsOnlyAPageOfAtMostTheLimitThatMakesProgress() throws {
        var planner = try Self.planner(connection: 0, listing: BookListing(limit: 2), verify: true)
        #expect(planner.judge(Self.page(2, cursor: "c"), for: planner.next()) == .success)
        #expect(planner.judge(Self.page(0, cursor: nil), for: planner.next()) == .success, "an empty library is one empty page")
        guard case .wrong(let tooMany) = planner.judge(Self.page(3, cursor: "c"), for: planner.next()) else {
            Issue.record("three books on a page of two were accepted")
            return
        }
        #expect(tooMany.contains("3 books"))
        #expect(planner.judge(Self.page(0, cursor: "c"), for: planner.next()) == .wrong("an empty page has a next_cursor"))
        let noID: JSONValue = ["ok": true, "result": ["books": [["title": "T"]], "next_cursor": nil]]
        #expect(planner.judge([noID.serialized()], for: planner.next()) == .wrong("a listed book has no string id"))
    }

    @Test(arguments: [BookListing(sort: "popularity"), BookListing(limit: 0), BookListing(limit: 101), BookListing(page: 0)])
    func listingsTheContractRefusesAreRefused(_ listing: BookListing) {
        #expect(throws: LoadTestError.self) { try listing.validate() }
        var configuration = LoadTestConfiguration()
        configuration.listing = listing
        #expect(throws: LoadTestError.self) { try configuration.validate() }
    }

    /// Against the fake (seven books, two a page, so four pages): a run follows every page and
    /// starts over, and setup finds the cursor to a page or says the library ends before it.
    @Test func aRunPagesThroughTheLibraryAndSetupFindsThePageItLists() throws {
        let fake = try FakeLyceum()
        defer { fake.stop() }
        var create = LoadTestConfiguration(endpoints: [fake.endpoint], mix: try ScenarioMix(parsing: "book-create"), connections: 1,
                                           load: .closed(inFlight: 1), stop: .requests(7), warmUp: .zero, seed: 5, learnerCount: 1)
        try run(fake, create)
        create.mix = try ScenarioMix(parsing: "book-list")
        create.stop = .requests(40)
        create.verify = true
        create.listing = BookListing(limit: 2)
        let following = try run(fake, create)
        #expect(following.statistics.completed == 40 && following.statistics.errors.isEmpty, "\(following.statistics.errors)")
        #expect(fake.firstPagesListed == 10, "40 requests through 4 pages: 10 first pages")

        create.listing.page = 4
        let last = try run(fake, create)
        #expect(last.statistics.errors.isEmpty, "\(last.statistics.errors) \(last.statistics.wrongReplies)")
        #expect(fake.firstPagesListed == 11, "setup listed the first page once, the run never")

        create.listing.page = 5
        #expect { try run(fake, create) } throws: { error in
            guard let error = error as? LoadTestError else { return false }
            return error.code == .setupFailed && error.detail.contains("ends at page 4")
        }
    }

    @discardableResult
    private func run(_ fake: FakeLyceum, _ configuration: LoadTestConfiguration) throws -> LoadTestResult {
        let workload = try Workload.prepare(endpoint: fake.endpoint, mix: configuration.mix, seed: configuration.seed,
                                            learnerCount: configuration.learnerCount, bookCount: configuration.bookCount,
                                            listing: configuration.listing, timeout: configuration.timeout, context: fake.context)
        return try LoadTestRunner(configuration: configuration, workload: workload, context: fake.context).run()
    }
}
