import JSON

/// Correct answers out of questions.
public struct Score: Equatable, Sendable {
    /// Correct answers.
    public let score: Int
    /// Questions.
    public let total: Int
}

/// A learner's progress in one course, as every progress write returns it.
public struct ProgressSummary: Equatable, Sendable {
    /// The course's id.
    public let course: String
    /// Lessons watched.
    public let watchedCount: Int
    /// Lessons the course has.
    public let lessonCount: Int
    /// Watched lessons × 100 / lessons, rounded down.
    public let percent: Int
    /// The lesson the learner is on.
    public let currentLesson: String?
    /// Whether every lesson is watched.
    public let completed: Bool
    /// The best quiz attempt, if any.
    public let bestScore: Score?
    /// RFC 3339 UTC time of the last change.
    public let updatedAt: String
}

/// One submitted quiz attempt.
public struct QuizAttempt: Equatable, Sendable {
    /// Correct answers.
    public let score: Int
    /// Questions.
    public let total: Int
    /// The ids of the questions answered wrongly.
    public let wrong: [String]
    /// The answer indexes given.
    public let answers: [Int]
    /// When it was submitted.
    public let submittedAt: String
}

/// Everything about a learner in a course (`progress get`).
public struct LearnerProgress: Equatable, Sendable {
    /// A saved playback position.
    public struct Position: Equatable, Sendable {
        /// The lesson's id.
        public let lesson: String
        /// Seconds into it.
        public let seconds: Double
    }

    /// The learner's id.
    public let learner: String
    /// The course's id.
    public let course: String
    /// Whether the learner has started; `false` with empty values otherwise.
    public let started: Bool
    /// Watched lesson ids, in course order.
    public let watched: [String]
    /// Lessons watched.
    public let watchedCount: Int
    /// Lessons the course has.
    public let lessonCount: Int
    /// Percentage watched, rounded down.
    public let percent: Int
    /// The lesson the learner is on.
    public let currentLesson: String?
    /// Whether every lesson is watched.
    public let completed: Bool
    /// Saved playback positions.
    public let positions: [Position]
    /// The best quiz attempt.
    public let bestAttempt: QuizAttempt?
    /// The latest quiz attempt.
    public let latestAttempt: QuizAttempt?
    /// When the learner started.
    public let startedAt: String?
    /// When anything last changed.
    public let updatedAt: String?
}

/// A scored quiz submission (`progress submit_quiz`).
public struct QuizSubmission: Equatable, Sendable {
    /// Correct answers.
    public let score: Int
    /// Questions.
    public let total: Int
    /// The ids of the questions answered wrongly.
    public let wrong: [String]
    /// The learner's progress after the submission.
    public let progress: ProgressSummary
}

/// One page of a learner's courses, most recently updated first (`progress list`).
public struct ProgressPage: Equatable, Sendable {
    /// The learner's id.
    public let learner: String
    /// The progress in each course of this page.
    public let courses: [ProgressSummary]
    /// The cursor of the next page; `nil` on the last.
    public let nextCursor: String?
}

/// How a course's learners are doing (`progress course_stats`).
public struct CourseStats: Equatable, Sendable {
    /// The course's id.
    public let course: String
    /// Learners who started it.
    public let learnersStarted: Int
    /// Learners who watched every lesson.
    public let learnersCompleted: Int
    /// Learners who submitted the quiz.
    public let quizTakers: Int
    /// The mean best score in percent, one decimal; `nil` without quiz takers.
    public let averageScorePercent: Double?
}

extension Score: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        score = try reply.integer("score")
        total = try reply.integer("total")
    }
}

extension ProgressSummary: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        course = try reply.string("course")
        watchedCount = try reply.integer("watched_count")
        lessonCount = try reply.integer("lesson_count")
        percent = try reply.integer("percent")
        currentLesson = try reply.optionalString("current_lesson")
        completed = try reply.bool("completed")
        bestScore = try reply.optionalResult("best_score")
        updatedAt = try reply.string("updated_at")
    }
}

extension QuizAttempt: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        score = try reply.integer("score")
        total = try reply.integer("total")
        wrong = try reply.strings("wrong")
        answers = try reply.integers("answers")
        submittedAt = try reply.string("submitted_at")
    }
}

extension LearnerProgress.Position: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        lesson = try reply.string("lesson")
        seconds = try reply.number("seconds")
    }
}

extension LearnerProgress: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        learner = try reply.string("learner")
        course = try reply.string("course")
        started = try reply.bool("started")
        watched = try reply.strings("watched")
        watchedCount = try reply.integer("watched_count")
        lessonCount = try reply.integer("lesson_count")
        percent = try reply.integer("percent")
        currentLesson = try reply.optionalString("current_lesson")
        completed = try reply.bool("completed")
        positions = try reply.results("positions")
        bestAttempt = try reply.optionalResult("best_attempt")
        latestAttempt = try reply.optionalResult("latest_attempt")
        startedAt = try reply.optionalString("started_at")
        updatedAt = try reply.optionalString("updated_at")
    }
}

extension QuizSubmission: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        score = try reply.integer("score")
        total = try reply.integer("total")
        wrong = try reply.strings("wrong")
        progress = try reply.result("progress")
    }
}

extension ProgressPage: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        learner = try reply.string("learner")
        courses = try reply.results("courses")
        nextCursor = try reply.optionalString("next_cursor")
    }
}

extension CourseStats: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        course = try reply.string("course")
        learnersStarted = try reply.integer("learners_started")
        learnersCompleted = try reply.integer("learners_completed")
        quizTakers = try reply.integer("quiz_takers")
        averageScorePercent = try reply.optionalNumber("average_score_percent")
    }
}

/// The result of the writes but `submit_quiz`: `{"progress": summary}`.
struct ProgressResult: ReplyResult {
    let progress: ProgressSummary
    init(reply: inout JSONObjectReader) throws(JSONReadError) { progress = try reply.result("progress") }
}

/// The result of `get`: `{"progress": …}`.
struct LearnerProgressResult: ReplyResult {
    let progress: LearnerProgress
    init(reply: inout JSONObjectReader) throws(JSONReadError) { progress = try reply.result("progress") }
}
