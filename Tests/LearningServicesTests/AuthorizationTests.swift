import Access
import Catalog
import JSON
import Journal
import LearningServices
import LearningServicesTestSupport
import Testing

/// The services' per-operation rules: a `learner` key acts only for its learners, `course_stats`
/// is for app and admin keys, the catalog is for everyone; a refusal is `forbidden` (or
/// `bad_request` for a request stating contract version 1) and changes nothing.
@Suite struct AuthorizationTests {
    static let adaPhone = Caller.authenticated(Principal(name: "ada-phone", role: .learner, learners: ["ada"]))
    static let family = Caller.authenticated(Principal(name: "family-tablet", role: .learner, learners: ["ada", "bob"]))
    static let app = Caller.authenticated(Principal(name: "backend", role: .app))
    static let admin = Caller.authenticated(Principal(name: "operator", role: .admin))
    static let dashboard = Caller.authenticated(Principal(name: "wall", role: .dashboard))
    static let bobsBook = "00000000-0000-4000-8000-000000000001"

    let log = InMemoryChangeLog()
    let books: BooksService
    let progressLog = InMemoryChangeLog()
    let progress: ProgressService
    let catalog: CatalogService

    init() throws {
        books = BooksService(log: log, environment: deterministicEnvironment())
        let store = CatalogStore(try Catalog.sample())
        progress = ProgressService(catalog: store, log: progressLog, environment: deterministicEnvironment())
        catalog = CatalogService(store: store)
    }

    func call(_ service: some LearningService, _ request: String, as caller: Caller) throws -> JSONValue {
        try JSONParser().parse(service.handle(Array(request.utf8), caller: caller))
    }

    /// Bob's one book, created by the app with a request id, and its reply.
    func createBobsBook() throws -> JSONValue {
        let created = try call(books, #"{"op":"create","learner":"bob","title":"Emma","author":"Jane Austen","genre":"Romance","rating":4,"request_id":"bob-1"}"#, as: Self.app)
        #expect(result(created)?["book"]?["id"] == .string(Self.bobsBook))
        return created
    }

    @Test(arguments: [
        #"{"op":"get","learner":"bob","id":"00000000-0000-4000-8000-000000000001"}"#,
        #"{"op":"update","learner":"bob","id":"00000000-0000-4000-8000-000000000001","title":"Defaced"}"#,
        #"{"op":"delete","learner":"bob","id":"00000000-0000-4000-8000-000000000001"}"#,
        #"{"op":"list","learner":"bob"}"#,
        #"{"op":"create","learner":"bob","title":"Spam","author":"A","genre":"Kids","rating":1}"#,
        // A retry of bob's own request id must not hand out bob's stored reply.
        #"{"op":"create","learner":"bob","title":"Emma","author":"Jane Austen","genre":"Romance","rating":4,"request_id":"bob-1"}"#,
    ])
    func aLearnerKeyIsForbiddenOtherLearnersBooks(request: String) throws {
        let original = try createBobsBook()
        let recordsBefore = log.records
        let refused = try call(books, request, as: Self.adaPhone)
        #expect(errorCode(refused) == "forbidden")
        #expect(refused["error"]?["field"] == "$.learner")
        #expect(refused["error"]?["message"] == "this key may not act for learner bob")
        #expect(log.records == recordsBefore, "a refused request wrote to the journal")
        let unchanged = try call(books, #"{"op":"get","learner":"bob","id":"\#(Self.bobsBook)"}"#, as: Self.app)
        #expect(unchanged == original)
    }

    @Test func aLearnerKeyActsForItsOwnLearnersAndAppAndAdminKeysForAnyone() throws {
        _ = try createBobsBook()
        #expect(result(try call(books, #"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#, as: Self.adaPhone)) != nil)
        #expect(result(try call(books, #"{"op":"list","learner":"ada"}"#, as: Self.adaPhone))?["books"]?.arrayCount == 1)
        #expect(result(try call(books, #"{"op":"list","learner":"bob"}"#, as: Self.family))?["books"]?.arrayCount == 1)
        #expect(result(try call(books, #"{"op":"get","learner":"bob","id":"\#(Self.bobsBook)"}"#, as: Self.admin)) != nil)
        #expect(result(try call(books, #"{"op":"list","learner":"bob"}"#, as: .unverified))?["books"]?.arrayCount == 1)
        #expect(errorCode(try call(books, #"{"op":"list","learner":"bob"}"#, as: Self.dashboard)) == "forbidden")
    }

    @Test(arguments: [
        #"{"op":"mark_watched","learner":"bob","course":"3","lesson":"1"}"#,
        #"{"op":"mark_unwatched","learner":"bob","course":"3","lesson":"1"}"#,
        #"{"op":"save_position","learner":"bob","course":"3","lesson":"1","position_seconds":12}"#,
        #"{"op":"begin_course","learner":"bob","course":"3"}"#,
        #"{"op":"open_lesson","learner":"bob","course":"3","lesson":"1"}"#,
        #"{"op":"submit_quiz","learner":"bob","course":"3","answers":[0,0]}"#,
        #"{"op":"get","learner":"bob","course":"3"}"#,
        #"{"op":"list","learner":"bob"}"#,
    ])
    func aLearnerKeyIsForbiddenOtherLearnersProgress(request: String) throws {
        #expect(result(try call(progress, #"{"op":"mark_watched","learner":"bob","course":"3","lesson":"1"}"#, as: Self.app)) != nil)
        let recordsBefore = progressLog.records
        let handled = progress.handleWithCommit(Array(request.utf8), caller: Self.adaPhone)
        let reply = try JSONParser().parse(handled.reply)
        #expect(errorCode(reply) == "forbidden")
        #expect(reply["error"]?["field"] == "$.learner")
        #expect(handled.event == nil && handled.commit == nil)
        #expect(handled.errorCode == .forbidden)
        #expect(progressLog.records == recordsBefore)
        let bob = try call(progress, #"{"op":"get","learner":"bob","course":"3"}"#, as: Self.app)
        #expect(result(bob)?["progress"]?["watched"] == ["1"])
    }

    @Test func courseStatisticsAreForAppAndAdminKeysOnly() throws {
        let request = #"{"op":"course_stats","course":"3"}"#
        for refused in [Self.adaPhone, Self.family, Self.dashboard] {
            let reply = try call(progress, request, as: refused)
            #expect(errorCode(reply) == "forbidden")
            #expect(reply["error"]?["field"] == "$.op")
        }
        for allowed in [Self.app, Self.admin, Caller.unverified] {
            #expect(result(try call(progress, request, as: allowed))?["course"] == "3")
        }
    }

    @Test func anyCallerReadsTheCatalog() throws {
        for caller in [Self.adaPhone, Self.dashboard, Self.app, Caller.unverified] {
            #expect(result(try call(catalog, #"{"op":"list_categories"}"#, as: caller)) != nil)
        }
    }

    @Test func aRequestStatingVersion1GetsBadRequestInsteadOfForbidden() throws {
        _ = try createBobsBook()
        let stated1 = books.handleWithCommit(Array(#"{"op":"list","v":1,"learner":"bob"}"#.utf8), caller: Self.adaPhone)
        let v1 = try JSONParser().parse(stated1.reply)
        #expect(errorCode(v1) == "bad_request")
        #expect(v1["error"]?["field"] == "$.learner")
        #expect(v1["error"]?["message"] == "this key may not act for learner bob")
        // Metrics count what the service decided, not what an old client is told.
        #expect(stated1.errorCode == .forbidden)
        #expect(stated1.operationLabel == "list")
        let stated2 = try call(books, #"{"op":"list","v":2,"learner":"bob"}"#, as: Self.adaPhone)
        #expect(errorCode(stated2) == "forbidden")
        // Version 1 clients see every version 1 code as before.
        #expect(errorCode(try call(books, #"{"op":"get","v":1,"learner":"ada","id":"nope"}"#, as: Self.adaPhone)) == "not_found")
        let unknown = try call(books, #"{"op":"list","v":5,"learner":"ada"}"#, as: Self.adaPhone)
        #expect(errorCode(unknown) == "bad_request")
        #expect(unknown["error"]?["field"] == "$.v")
    }
}
