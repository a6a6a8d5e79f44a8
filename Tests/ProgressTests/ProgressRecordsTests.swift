import Catalog
import Journal
import Progress
import Testing

@Suite struct ProgressRecordsTests {
    let course = Course(
        id: "algebra", title: "Algebra", category: "Maths", description: nil, image: nil, time: nil,
        lessons: [
            Lesson(id: "l1", title: "One", video: nil, thumbnail: nil, duration: nil, explanation: nil),
            Lesson(id: "l2", title: "Two", video: nil, thumbnail: nil, duration: nil, explanation: nil),
        ],
        quiz: Quiz(description: nil, image: nil, time: nil, questions: [
            Question(id: "q1", content: "1+1", answers: ["1", "2"], correctIndex: 1),
            Question(id: "q2", content: "2+2", answers: ["4", "5"], correctIndex: 0),
        ]))

    func perform(_ action: ProgressAction, on records: inout ProgressRecords, learner: String = "ada", now: Int64 = 10) throws -> ProgressOutcome {
        let outcome = try records.plan(action, by: learner, in: course, now: now)
        if let change = outcome.change { try records.apply(change) }
        return outcome
    }

    @Test func watchingIsIdempotentAndCompletesTheCourse() throws {
        var records = ProgressRecords()
        let first = try perform(.watch(lesson: "l1"), on: &records)
        #expect(first.event?.kind == .lessonWatched && first.summary.percent == 50)
        let again = try perform(.watch(lesson: "l1"), on: &records, now: 20)
        #expect(again.change == nil && again.event == nil && again.progress.updatedAt == 10)
        let last = try perform(.watch(lesson: "l2"), on: &records, now: 30)
        #expect(last.summary.completed && last.event?.completesCourse == true)
        #expect(records.statistics(of: "algebra").completed == 1)
        _ = try perform(.unwatch(lesson: "l2"), on: &records, now: 40)
        #expect(records.statistics(of: "algebra").completed == 0 && records.statistics(of: "algebra").started == 1)
    }

    @Test func scoresQuizzesKeepingBestAndLatest() throws {
        var records = ProgressRecords()
        let good = try perform(.submitQuiz(answers: [1, 0]), on: &records)
        #expect(good.attempt?.score == 2 && good.attempt?.wrong == [])
        let bad = try perform(.submitQuiz(answers: [0, 0]), on: &records, now: 20)
        #expect(bad.attempt?.wrong == ["q1"])
        #expect(bad.progress.bestAttempt?.score == 2 && bad.progress.latestAttempt?.score == 1)
        _ = try perform(.submitQuiz(answers: [0, 1]), on: &records, learner: "grace")
        #expect(records.statistics(of: "algebra").averageScorePercent == 50)
        #expect(throws: ProgressError(.invalidField, field: "answers[1]", "must be between 0 and 1")) {
            try records.plan(.submitQuiz(answers: [0, 7]), by: "ada", in: course, now: 30)
        }
        #expect(throws: ProgressError.self) { try records.plan(.submitQuiz(answers: [0]), by: "ada", in: course, now: 30) }
    }

    @Test func beginningAndOpeningMoveTheCurrentLesson() throws {
        var records = ProgressRecords()
        #expect(try perform(.begin, on: &records).progress.currentLesson == "l1")
        #expect(try perform(.open(lesson: "l2"), on: &records).progress.currentLesson == "l2")
        #expect(try perform(.begin, on: &records).change == nil)
        #expect(throws: ProgressError(.notFound, field: "lesson", "course algebra has no lesson l9")) {
            try records.plan(.open(lesson: "l9"), by: "ada", in: course, now: 30)
        }
    }

    @Test func snapshotRebuildsRecordsAndAggregates() throws {
        var records = ProgressRecords()
        _ = try perform(.watch(lesson: "l1"), on: &records)
        _ = try perform(.savePosition(lesson: "l2", seconds: 61.5), on: &records)
        _ = try perform(.submitQuiz(answers: [1, 1]), on: &records, learner: "grace")
        var rebuilt = ProgressRecords()
        for change in records.snapshot() { try rebuilt.apply(change) }
        #expect(rebuilt.progress(of: "ada", in: "algebra") == records.progress(of: "ada", in: "algebra"))
        #expect(rebuilt.progress(of: "ada", in: "algebra")?.positions == ["l2": 61.5])
        #expect(rebuilt.statistics(of: "algebra") == records.statistics(of: "algebra"))
        #expect(rebuilt.courses(of: "grace").map(\.course) == ["algebra"])
    }
}

@Suite struct ProgressPayloadTests {
    @Test func theFastAndTheGeneralDecodingAgree() throws {
        let record = CourseProgress(
            learner: "ada", course: "c1", watched: ["l1", "l3"], positions: ["l2": 12.5, "l3": 7],
            currentLesson: "l3", bestAttempt: QuizAttempt(score: 2, total: 3, wrong: ["q2"], answers: [1, 0, 2], submittedAt: 5),
            latestAttempt: nil, completed: false, startedAt: 1, updatedAt: 9)
        let payload = record.journalValue()
        #expect(try CourseProgress(journalValue: payload) == record)
        // The same members in another order take the general path.
        let reordered = Array(#"{"course":"c1","learner":"ada","watched":["l1","l3"],"positions":{"l2":12.5,"l3":7},"current":"l3","#.utf8)
            + Array(#""best":{"score":2,"total":3,"wrong":["q2"],"answers":[1,0,2],"at":5},"latest":null,"completed":false,"#.utf8)
            + Array(#""started_at":1,"updated_at":9}"#.utf8)
        #expect(try CourseProgress(journalValue: reordered) == record)
        #expect(throws: ValueDecodingError.malformed(#"the member "course" is missing"#)) {
            try CourseProgress(journalValue: Array(#"{"learner":"ada"}"#.utf8))
        }
        let newer = Array(#"{"value_format":3,"learner":"ada"}"#.utf8)
        #expect(throws: ValueDecodingError.newerFormat(found: 3, newestReadable: 1)) { try CourseProgress(journalValue: newer) }
    }
}

/// Issue 40: `progress list` pages come from an order kept per learner; every page, walked by
/// its position, must give what sorting every record gives, after stores, re-stores and removals.
@Suite struct ProgressListOrderTests {
    @Test func pagesFollowTheReferenceOrderAfterStoresAndRemovals() throws {
        var records = ProgressRecords()
        var state: UInt64 = 40
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        for round in 0..<3_000 {
            let course = "c\(next() % 700)"
            if round % 9 == 8 {
                try records.apply(.delete(ProgressRecords.collection, key: "ada/" + course))
            } else {
                // Few distinct times, so that ties by course id are common.
                records.store(CourseProgress(learner: "ada", course: course, startedAt: 0, updatedAt: Int64(next() % 40)))
            }
        }
        let all = records.courses(of: "ada")
        let reference = all.sorted { ($0.updatedAt, $1.course) > ($1.updatedAt, $0.course) }
        #expect(all.map(\.course) == reference.map(\.course))
        #expect(Set(all.map(\.course)).count == all.count)
        var walked: [String] = []
        var after: (updatedAt: Int64, course: String)?
        repeat {
            let page = records.courses(of: "ada", after: after, limit: 17)
            walked += page.map(\.course)
            after = page.count == 17 ? page.last.map { ($0.updatedAt, $0.course) } : nil
        } while after != nil
        #expect(walked == reference.map(\.course))
        // A rebuild from the snapshot keeps the same order.
        var rebuilt = ProgressRecords()
        for change in records.snapshot() { try rebuilt.apply(change) }
        #expect(rebuilt.courses(of: "ada").map(\.course) == reference.map(\.course))
    }
}
