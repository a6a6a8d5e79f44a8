import Catalog
import JSON
import Journal
import LearningServices
import LearningServicesTestSupport
import Progress
import Testing

@Suite struct ProgressServiceTests {
    let log = InMemoryChangeLog()
    let store: CatalogStore
    let service: ProgressService

    init() throws {
        store = CatalogStore(try Catalog.sample())
        service = ProgressService(catalog: store, log: log, environment: deterministicEnvironment())
    }

    func send(_ request: String) -> (reply: JSONValue, event: ProgressEvent?) {
        let (bytes, event) = service.handleWithEvent(Array(request.utf8))
        switch Result(catching: { () throws(JSONParseError) in try JSONParser().parse(bytes) }) {
        case .success(let reply): return (reply, event)
        case .failure(let error): Issue.record("reply is not JSON: \(error)"); return (.null, event)
        }
    }

    @Test func watchingReportsProgressAndDescribesTheChange() throws {
        let (reply, event) = send(#"{"op":"mark_watched","learner":"ada","course":"2","lesson":"1"}"#)
        #expect(result(reply)?["progress"]?["percent"] == 33)
        #expect(event?.kind == .lessonWatched && event?.lesson == "1" && event?.summary.watchedCount == 1)
        let payload = try JSONParser().parse(try #require(event).payload)
        #expect(payload["type"] == "lesson_watched" && payload["progress"]?["percent"] == 33)

        let repeated = send(#"{"op":"mark_watched","learner":"ada","course":"2","lesson":"1"}"#)
        #expect(result(repeated.reply)?["progress"]?["percent"] == 33 && repeated.event == nil)
        #expect(log.records.count == 1)
    }

    @Test func readsOneCourseAllCoursesAndAggregates() throws {
        _ = send(#"{"op":"begin_course","learner":"ada","course":"1"}"#)
        _ = send(#"{"op":"save_position","learner":"ada","course":"1","lesson":"1","position_seconds":42.5}"#)
        let quiz = send(#"{"op":"submit_quiz","learner":"ada","course":"1","answers":[2,1,1]}"#)
        #expect(result(quiz.reply)?["score"] == 2 && result(quiz.reply)?["wrong"] == ["2"])
        #expect(quiz.event?.kind == .quizSubmitted)
        _ = send(#"{"op":"submit_quiz","learner":"grace","course":"1","answers":[2,0,1]}"#)

        let detail = try #require(result(send(#"{"op":"get","learner":"ada","course":"1"}"#).reply)?["progress"])
        #expect(detail["current_lesson"] == "1" && detail["positions"] == [["lesson": "1", "seconds": 42.5]])
        #expect(detail["best_attempt"]?["score"] == 2 && detail["started"] == true)
        let fresh = try #require(result(send(#"{"op":"get","learner":"nobody","course":"1"}"#).reply)?["progress"])
        #expect(fresh["started"] == false && fresh["percent"] == 0)

        #expect(result(send(#"{"op":"list","learner":"ada"}"#).reply)?["courses"]?.arrayCount == 1)
        let statistics = try #require(result(send(#"{"op":"course_stats","course":"1"}"#).reply))
        #expect(statistics["learners_started"] == 2 && statistics["quiz_takers"] == 2)
        #expect(statistics["average_score_percent"] == 83.3)
    }

    @Test(arguments: [
        (#"{"op":"mark_watched","learner":"ada","course":"nope","lesson":"1"}"#, "not_found", "$.course"),
        (#"{"op":"mark_watched","learner":"ada","course":"2","lesson":"99"}"#, "not_found", "$.lesson"),
        (#"{"op":"submit_quiz","learner":"ada","course":"python-for-data","answers":[]}"#, "not_found", "$.course"),
        (#"{"op":"submit_quiz","learner":"ada","course":"1","answers":[0,0,9]}"#, "bad_request", "$.answers[2]"),
        (#"{"op":"submit_quiz","learner":"ada","course":"1","answers":[0,"a",1]}"#, "bad_request", "$.answers[1]"),
        (#"{"op":"submit_quiz","learner":"ada","course":"1","answers":[0]}"#, "bad_request", "$.answers"),
        (#"{"op":"save_position","learner":"ada","course":"1","lesson":"1","position_seconds":-1}"#, "bad_request", "$.position_seconds"),
        (#"{"op":"save_position","learner":"ada","course":"1","lesson":"1"}"#, "bad_request", "$.position_seconds"),
        (#"{"op":"mark_watched","learner":"ada","course":"2","lesson":"1","eye":true}"#, "bad_request", "$.eye"),
        (#"{"op":"mark_watched","course":"2","lesson":"1"}"#, "bad_request", "$.learner"),
        (#"{"op":"course_stats"}"#, "bad_request", "$.course"),
        (#"{"op":"reset"}"#, "unknown_op", "$.op"),
        (#"{"op":"get","learner":"ada","course":"1","request_id":"r1"}"#, "bad_request", "$.request_id"),
    ])
    func refusesBadRequestsAndChangesNothing(request: String, code: String, field: String) {
        let (reply, event) = send(request)
        #expect(errorCode(reply) == code)
        #expect(reply["error"]?["field"] == .string(field))
        #expect(event == nil && log.records.isEmpty)
    }

    /// Writes store the record they planned without decoding its journal payload (issue 19);
    /// the records and the course aggregates must still be exactly what replaying the
    /// payloads gives.
    @Test func theStateAWriteLeavesIsTheStateItsRecordsReplayTo() throws {
        let writes = [
            #"{"op":"begin_course","learner":"ada","course":"1"}"#,
            #"{"op":"mark_watched","learner":"ada","course":"1","lesson":"1"}"#,
            #"{"op":"save_position","learner":"ada","course":"1","lesson":"2","position_seconds":42.123456789}"#,
            #"{"op":"save_position","learner":"ada","course":"1","lesson":"2","position_seconds":0.1}"#,
            #"{"op":"submit_quiz","learner":"ada","course":"1","answers":[2,1,1]}"#,
            #"{"op":"submit_quiz","learner":"ada","course":"1","answers":[2,0,1],"request_id":"q-2"}"#,
            #"{"op":"mark_watched","learner":"ben","course":"2","lesson":"1"}"#,
            #"{"op":"mark_unwatched","learner":"ada","course":"1","lesson":"1"}"#,
            #"{"op":"submit_quiz","learner":"ben","course":"1","answers":[0,0,0]}"#,
        ]
        for write in writes { #expect(send(write).reply["ok"] == true, "\(write)") }

        var replayed = ProgressState()
        for change in log.changes { try replayed.apply(change) }
        let live = service.currentState
        let order = { (a: JournalChange, b: JournalChange) in a.key < b.key }
        #expect(live.records.snapshot().sorted(by: order) == replayed.records.snapshot().sorted(by: order))
        for course in ["1", "2"] {
            #expect(live.records.statistics(of: course) == replayed.records.statistics(of: course))
            for learner in ["ada", "ben"] {
                #expect(live.records.progress(of: learner, in: course) == replayed.records.progress(of: learner, in: course))
            }
        }
        #expect(live.records.progress(of: "ada", in: "1")?.positions["2"] == 0.1)
    }

    @Test func retriedWritesSurviveARestart() throws {
        let request = Array(#"{"op":"submit_quiz","learner":"ada","course":"1","answers":[2,0,1],"request_id":"quiz-1"}"#.utf8)
        let first = service.handle(request)
        var replayed = ProgressState()
        for change in log.changes { try replayed.apply(change) }
        let restarted = ProgressService(state: replayed, catalog: store, log: log, environment: deterministicEnvironment())
        let (retried, event) = restarted.handleWithEvent(request)
        #expect(retried == first && event == nil)
        #expect(log.records.count == 1)
        #expect(replayed.records.progress(of: "ada", in: "1")?.latestAttempt?.score == 3)
    }
}
