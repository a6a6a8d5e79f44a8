import Access
import Catalog
import JSON
import LearningServices
import LearningServicesTestSupport
import Testing

/// The coordinator's domain half: which learner-less `progress` requests fan out, which are
/// refused before any partition is asked (the partitions see the coordinator's key, not the
/// caller's), and the merge of the partitions' sums.
@Suite struct CourseStatisticsFanOutTests {
    static let adaPhone = Caller.authenticated(Principal(name: "ada-phone", role: .learner, learners: ["ada"]))
    static let app = Caller.authenticated(Principal(name: "backend", role: .app))

    /// The reply the unpartitioned service gives `request` from `caller`.
    static func unpartitioned(_ request: String, as caller: Caller) throws -> [UInt8] {
        let service = ProgressService(catalog: CatalogStore(try Catalog.sample()), log: InMemoryChangeLog())
        return service.handle(Array(request.utf8), caller: caller)
    }

    @Test func courseStatsFansOutOnlyForTrustedCallersAndRefusesOthersAsTheServiceWould() throws {
        let request = #"{"op":"course_stats","course":"1"}"#
        #expect(CourseStatisticsFanOut.plan(Array(request.utf8), caller: Self.app)
            == .fanOut(partial: Array(#"{"op":"course_stats_partial","course":"1"}"#.utf8)))
        for (refused, caller) in [
            (request, Self.adaPhone), (#"{"op":"course_stats","course":"1","v":1}"#, Self.adaPhone),
            (#"{"op":"course_stats"}"#, Self.app), (#"{"op":"course_stats","course":"1","request_id":"r"}"#, Self.app),
        ] {
            #expect(CourseStatisticsFanOut.plan(Array(refused.utf8), caller: caller) == .reply(try Self.unpartitioned(refused, as: caller)),
                    "\(refused)")
        }
    }

    @Test func thePartialOpIsForwardedOnlyForTrustedCallers() throws {
        let partial = Array(#"{"op":"course_stats_partial","course":"1"}"#.utf8)
        #expect(CourseStatisticsFanOut.plan(partial, caller: Self.app) == .forward)
        guard case .reply(let refusal) = CourseStatisticsFanOut.plan(partial, caller: Self.adaPhone) else {
            Issue.record("a learner key's course_stats_partial would reach a partition as the coordinator's")
            return
        }
        #expect(errorCode(try JSONParser().parse(refusal)) == "forbidden")
        #expect(CourseStatisticsFanOut.plan(Array(#"{"op":"list"}"#.utf8), caller: Self.adaPhone) == .forward)
    }

    @Test func mergeSumsThePartitionsAndPassesTheFirstErrorOn() throws {
        func partial(_ started: Int, _ takers: Int, _ sum: Double) -> [UInt8] {
            Array(#"{"ok":true,"result":{"course":"1","learners_started":\#(started),"learners_completed":1,"quiz_takers":\#(takers),"best_fraction_sum":\#(sum)}}"#.utf8)
        }
        let merged = try JSONParser().parse(CourseStatisticsFanOut.merge([partial(2, 1, 0.5), partial(3, 2, 1.5)]))
        #expect(result(merged) == [
            "course": "1", "learners_started": 5, "learners_completed": 2, "quiz_takers": 3, "average_score_percent": 66.7,
        ])
        let missing = Array(#"{"ok":false,"error":{"code":"not_found","message":"no course","field":"$.course"}}"#.utf8)
        #expect(CourseStatisticsFanOut.merge([partial(1, 0, 0), missing]) == missing)
        let unavailable = try JSONParser().parse(CourseStatisticsFanOut.unavailable(service: "progress", missing: [3, 5], reason: "gone"))
        #expect(unavailable == [
            "ok": false, "error": ["code": "unavailable", "message": "progress partitions 3, 5 did not answer: gone", "partitions": [3, 5]],
        ])
    }
}
