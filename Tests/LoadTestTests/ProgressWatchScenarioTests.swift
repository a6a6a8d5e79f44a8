import JSON
@testable import LoadTest
import Testing

/// The `progress-watch` scenario writes on every request: it marks a lesson and then unmarks the
/// same one, so no request repeats what the learner's progress already says (issue 38).
@Suite struct ProgressWatchScenarioTests {
    @Test func everyMarkIsFollowedByTheUnmarkOfTheSameLesson() throws {
        let courses = [Workload.Course(id: "swift", lessonIDs: ["l1", "l2", "l3"], questionCount: 0),
                       Workload.Course(id: "rust", lessonIDs: ["r1", "r2"], questionCount: 0)]
        let workload = Workload(courses: courses, books: [], learners: ["ada", "grace", "alan"], seed: 7)
        var planner = RequestPlanner(workload: workload, mix: try ScenarioMix(parsing: "progress-watch"), verify: false, connection: 1)
        var marked: Set<[String]> = []
        for _ in 0..<200 {
            let mark = try JSONParser().parse(planner.next().body[0])
            let unmark = try JSONParser().parse(planner.next().body[0])
            #expect(mark["op"] == "mark_watched" && unmark["op"] == "mark_unwatched")
            for member in ["learner", "course", "lesson"] { #expect(mark[member] == unmark[member], "\(member) differs") }
            if case .string(let learner)? = mark["learner"], case .string(let lesson)? = mark["lesson"] { marked.insert([learner, lesson]) }
        }
        // The lessons are drawn from the whole workload, not one lesson again and again.
        #expect(marked.count > 10)
    }
}
