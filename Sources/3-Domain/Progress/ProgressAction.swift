/// A change a learner makes to their progress in one course.
public enum ProgressAction: Sendable, Equatable {
    case watch(lesson: String)
    case unwatch(lesson: String)
    /// Saves the playback position, in seconds, within a lesson.
    case savePosition(lesson: String, seconds: Double)
    /// Starts the course: the current lesson becomes the first one unless already set.
    case begin
    /// Makes `lesson` the current lesson.
    case open(lesson: String)
    /// Submits one answer index per question, in quiz order.
    case submitQuiz(answers: [Int])

    /// The longest playback position accepted, in seconds.
    public static let maxPositionSeconds = 86_400.0
}
