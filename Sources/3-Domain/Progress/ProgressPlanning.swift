import Catalog
import Journal
import LyceumLogging

/// The result of planning one progress action: the record afterwards, the change that stores
/// it (`nil` when nothing changes), what to publish, and the scored attempt for quizzes.
public struct ProgressOutcome: Sendable {
    /// The record after the action.
    public let progress: CourseProgress
    /// The record measured against the course.
    public let summary: ProgressSummary
    /// The change to journal and apply, `nil` when nothing changes.
    public let change: JournalChange?
    /// What to publish, `nil` when nothing changes.
    public let event: ProgressEvent?
    /// The scored attempt, for quiz submissions.
    public let attempt: QuizAttempt?
}

extension ProgressRecords {
    /// Plans `action` by `learner` in `course` at `now`, without changing anything; unknown
    /// lessons and quizzes are `notFound`, malformed answers `invalidField`.
    public func plan(_ action: ProgressAction, by learner: String, in course: Course, now: Int64) throws(ProgressError) -> ProgressOutcome {
        let existing = progress(of: learner, in: course.id)
        var record = existing ?? CourseProgress(learner: learner, course: course.id, startedAt: now, updatedAt: now)
        var attempt: QuizAttempt?
        let kind: ProgressEvent.Kind
        var lesson: String?
        switch action {
        case .watch(let id):
            try Self.requireLesson(id, in: course)
            record.watched.insert(id)
            (kind, lesson) = (.lessonWatched, id)
        case .unwatch(let id):
            try Self.requireLesson(id, in: course)
            record.watched.remove(id)
            (kind, lesson) = (.lessonUnwatched, id)
        case .savePosition(let id, let seconds):
            try Self.requireLesson(id, in: course)
            record.positions[id] = seconds
            (kind, lesson) = (.positionSaved, id)
        case .begin:
            if record.currentLesson == nil { record.currentLesson = course.lessons.first?.id }
            (kind, lesson) = (.courseBegun, record.currentLesson)
        case .open(let id):
            try Self.requireLesson(id, in: course)
            record.currentLesson = id
            (kind, lesson) = (.lessonOpened, id)
        case .submitQuiz(let answers):
            let scored = try Self.score(answers, in: course, now: now)
            attempt = scored
            record.latestAttempt = scored
            if record.bestAttempt.map({ scored.fraction > $0.fraction }) ?? true { record.bestAttempt = scored }
            kind = .quizSubmitted
        }
        let lessonIDs = course.lessons.map(\.id)
        record.completed = ProgressSummary(record, lessonIDs: lessonIDs).completed
        // A repeated action (watching a watched lesson) changes nothing and publishes nothing.
        guard record != existing || attempt != nil else {
            let unchanged = existing ?? record
            return ProgressOutcome(progress: unchanged, summary: ProgressSummary(unchanged, lessonIDs: lessonIDs), change: nil, event: nil, attempt: nil)
        }
        record.updatedAt = now
        let summary = ProgressSummary(record, lessonIDs: lessonIDs)
        let change = JournalChange.put(Self.collection, key: Self.key(learner, course.id), value: record.journalValue())
        let event = ProgressEvent(
            kind: kind, learner: learner, course: course.id, lesson: lesson, summary: summary,
            completesCourse: record.completed && existing?.completed != true, attempt: attempt)
        return ProgressOutcome(progress: record, summary: summary, change: change, event: event, attempt: attempt)
    }

    private static func requireLesson(_ id: String, in course: Course) throws(ProgressError) {
        guard course.lessonIndex(id) != nil else { throw ProgressError(.notFound, field: "lesson", "course \(course.id) has no lesson \(PeerText.excerpt(id))") }
    }

    private static func score(_ answers: [Int], in course: Course, now: Int64) throws(ProgressError) -> QuizAttempt {
        guard let quiz = course.quiz else { throw ProgressError(.notFound, field: "course", "course \(course.id) has no quiz") }
        guard answers.count == quiz.questions.count else {
            throw ProgressError(.invalidField, field: "answers", "must have one answer per question: \(quiz.questions.count)")
        }
        var wrong: [String] = []
        for (index, (question, answer)) in zip(quiz.questions, answers).enumerated() {
            guard question.answers.indices.contains(answer) else {
                throw ProgressError(.invalidField, field: "answers[\(index)]", "must be between 0 and \(question.answers.count - 1)")
            }
            if answer != question.correctIndex { wrong.append(question.id) }
        }
        return QuizAttempt(score: answers.count - wrong.count, total: answers.count, wrong: wrong, answers: answers, submittedAt: now)
    }
}
