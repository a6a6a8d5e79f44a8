import JSON
import Testing
@testable import Partitions

@Suite struct PartitionRouterTests {
    let router = PartitionRouter(scheme: try! PartitionScheme(count: 64), services: ["books", "progress"])

    func route(_ service: String, _ body: String) -> String {
        Array(body.utf8).withUnsafeBytes { router.route(service: service, body: $0) }
    }

    @Test func routesByTheLearnerMember() {
        #expect(route("books", #"{"op":"get","learner":"ada","id":"b1"}"#) == "books.p59")
        #expect(route("progress", #" { "v" : 2, "learner" : "bob" } "#) == "progress.p20")
        // Escapes are decoded before hashing: the same learner, however it is spelled.
        #expect(route("books", #"{"learner":"\u0061da"}"#) == "books.p59")
        // Nested values are skipped, and a nested `learner` is not the request's.
        #expect(route("books", #"{"book":{"learner":"bob","tags":[1,{"a":[]}]},"learner":"ada"}"#) == "books.p59")
    }

    @Test func leavesOtherRequestsTheirService() {
        #expect(route("catalog", #"{"learner":"ada"}"#) == "catalog")
        #expect(route("progress", #"{"op":"course_stats","course":"2"}"#) == "progress")
        #expect(route("books", #"{"learner":7}"#) == "books")
        #expect(route("books", #"{"learner":"ada""#) == "books.p59")
        #expect(route("books", #"{"op":"get""#) == "books")
        #expect(route("books", "not json") == "books")
        #expect(route("books", "") == "books")
        #expect(route("books", #"[{"learner":"ada"}]"#) == "books")
    }

    @Test func memberLookupReportsWhatItFound() {
        let parser = JSONParser()
        #expect(parser.member("learner", in: Array(#"{"learner":"ada"}"#.utf8)) == .string("ada"))
        #expect(parser.member("learner", in: Array(#"{"learner":null}"#.utf8)) == .notString)
        #expect(parser.member("learner", in: Array(#"{}"#.utf8)) == .absent)
        #expect(parser.member("learner", in: Array(#"{"a":1}"#.utf8)) == .absent)
        #expect(parser.member("learner", in: Array(#"{"a":01,"learner":"x"}"#.utf8)) == .malformed)
        #expect(parser.member("learner", in: Array(#"{"learner":"\ud800"}"#.utf8)) == .malformed)
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(JSONParser(maxDepth: 32).member("learner", in: Array(#"{"a":\#(deep),"learner":"x"}"#.utf8)) == .malformed)
    }
}
