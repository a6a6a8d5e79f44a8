import Catalog
import JSON
import LearningServices
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

    @Test func servesANewCatalogAfterAReload() throws {
        let store = CatalogStore(Catalog())
        let service = CatalogService(store: store)
        #expect(result(try service.call(#"{"op":"list_categories"}"#)) == ["categories": []])
        try store.reload(from: [try #require(Catalog.samplePath)])
        #expect(result(try service.call(#"{"op":"get_course","course":"2"}"#))?["course"]?["title"] == "Geometry")
    }
}
