/// Correct answers out of questions.
public struct Score: Decodable, Equatable, Sendable {
    /// Correct answers.
    public let score: Int
    /// Questions.
    public let total: Int
}

/// A learner's progress in one course, as every progress write returns it.
public struct ProgressSummary: Decodable, Equatable, Sendable {
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
public struct QuizAttempt: Decodable, Equatable, Sendable {
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
public struct LearnerProgress: Decodable, Equatable, Sendable {
    /// A saved playback position.
    public struct Position: Decodable, Equatable, Sendable {
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
public struct QuizSubmission: Decodable, Equatable, Sendable {
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
public struct ProgressPage: Decodable, Equatable, Sendable {
    /// The learner's id.
    public let learner: String
    /// The progress in each course of this page.
    public let courses: [ProgressSummary]
    /// The cursor of the next page; `nil` on the last.
    public let nextCursor: String?
}

/// How a course's learners are doing (`progress course_stats`).
public struct CourseStats: Decodable, Equatable, Sendable {
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

struct ProgressResult: Decodable { let progress: ProgressSummary }
struct LearnerProgressResult: Decodable { let progress: LearnerProgress }
