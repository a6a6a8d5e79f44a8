/// One learner's progress in one course.
public struct CourseProgress: Sendable, Equatable {
    /// The learner's id.
    public let learner: String
    /// The course's id.
    public let course: String
    /// Ids of the lessons watched.
    public var watched: Set<String>
    /// Playback positions in seconds, by lesson id.
    public var positions: [String: Double]
    /// The lesson the learner is on, if any.
    public var currentLesson: String?
    /// The highest-scoring quiz attempt (the earliest of equal ones).
    public var bestAttempt: QuizAttempt?
    /// The most recent quiz attempt.
    public var latestAttempt: QuizAttempt?
    /// Whether every lesson of the course was watched when the record was last written.
    public var completed: Bool
    /// Milliseconds since 1970 (UTC).
    public let startedAt: Int64
    /// Milliseconds since 1970 (UTC).
    public var updatedAt: Int64

    /// A record with these fields.
    public init(
        learner: String, course: String, watched: Set<String> = [], positions: [String: Double] = [:],
        currentLesson: String? = nil, bestAttempt: QuizAttempt? = nil, latestAttempt: QuizAttempt? = nil,
        completed: Bool = false, startedAt: Int64, updatedAt: Int64
    ) {
        self.learner = learner
        self.course = course
        self.watched = watched
        self.positions = positions
        self.currentLesson = currentLesson
        self.bestAttempt = bestAttempt
        self.latestAttempt = latestAttempt
        self.completed = completed
        self.startedAt = startedAt
        self.updatedAt = updatedAt
    }
}

/// One scored submission of a course's quiz.
public struct QuizAttempt: Sendable, Equatable {
    /// Number of correct answers.
    public let score: Int
    /// Number of questions.
    public let total: Int
    /// Ids of the questions answered wrongly, in quiz order.
    public let wrong: [String]
    /// The submitted answer indexes, in quiz order.
    public let answers: [Int]
    /// Milliseconds since 1970 (UTC).
    public let submittedAt: Int64

    /// An attempt with these fields.
    public init(score: Int, total: Int, wrong: [String], answers: [Int], submittedAt: Int64) {
        self.score = score
        self.total = total
        self.wrong = wrong
        self.answers = answers
        self.submittedAt = submittedAt
    }

    /// Score as a fraction of the total, 0 for an empty quiz.
    public var fraction: Double { total == 0 ? 0 : Double(score) / Double(total) }
}

/// A progress record measured against the course as the catalog has it now.
public struct ProgressSummary: Sendable, Equatable {
    /// The course's id.
    public let course: String
    /// Watched lessons that the course still has.
    public let watchedCount: Int
    /// Lessons the course has now.
    public let lessonCount: Int
    /// `watchedCount` as a whole percentage of `lessonCount`, rounded down.
    public let percent: Int
    /// The lesson the learner is on, if any.
    public let currentLesson: String?
    /// Whether every lesson is watched.
    public let completed: Bool
    /// The best quiz attempt, if any.
    public let bestAttempt: QuizAttempt?
    /// Milliseconds since 1970 (UTC) of the last change.
    public let updatedAt: Int64

    /// The summary of `progress` in `lessonIDs`, the course's lessons in order.
    public init(_ progress: CourseProgress, lessonIDs: [String]) {
        course = progress.course
        watchedCount = lessonIDs.filter(progress.watched.contains).count
        lessonCount = lessonIDs.count
        percent = lessonCount == 0 ? 0 : watchedCount * 100 / lessonCount
        currentLesson = progress.currentLesson
        completed = lessonCount > 0 && watchedCount == lessonCount
        bestAttempt = progress.bestAttempt
        updatedAt = progress.updatedAt
    }
}
