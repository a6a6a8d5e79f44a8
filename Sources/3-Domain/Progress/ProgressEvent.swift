/// What a successful progress write changed, for publishing to subscribers.
public struct ProgressEvent: Sendable, Equatable {
    /// The kinds of change; the raw value is the published event type.
    public enum Kind: String, Sendable {
        case lessonWatched = "lesson_watched"
        case lessonUnwatched = "lesson_unwatched"
        case positionSaved = "position_saved"
        case courseBegun = "course_begun"
        case lessonOpened = "lesson_opened"
        case quizSubmitted = "quiz_submitted"
    }

    /// What happened.
    public let kind: Kind
    /// Whose progress changed.
    public let learner: String
    /// In which course.
    public let course: String
    /// The lesson concerned, for lesson events.
    public let lesson: String?
    /// The learner's progress in the course after the change.
    public let summary: ProgressSummary
    /// Whether this change is the one that completed the course.
    public let completesCourse: Bool
    /// The scored attempt, for quiz submissions.
    public let attempt: QuizAttempt?
}
