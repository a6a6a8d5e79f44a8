import JSON

/// The `progress` service: learners' progress through courses (protocol/README.md, "Service
/// `progress`"). Writes return the learner's summary in the course and take an optional
/// `requestID`, as ``BooksAPI`` explains.
public struct ProgressAPI: Sendable {
    let caller: RequestSender

    /// Starts a course; its first lesson becomes the current one unless one is set.
    public func beginCourse(learner: String, course: String, requestID: String? = nil) async throws(LyceumError) -> ProgressSummary {
        try await write("begin_course", ["learner": .string(learner), "course": .string(course)], requestID)
    }

    /// Makes `lesson` the current ("next") lesson.
    public func openLesson(learner: String, course: String, lesson: String, requestID: String? = nil) async throws(LyceumError) -> ProgressSummary {
        try await write("open_lesson", ["learner": .string(learner), "course": .string(course), "lesson": .string(lesson)], requestID)
    }

    /// Marks a lesson watched; idempotent.
    public func markWatched(learner: String, course: String, lesson: String, requestID: String? = nil) async throws(LyceumError) -> ProgressSummary {
        try await write("mark_watched", ["learner": .string(learner), "course": .string(course), "lesson": .string(lesson)], requestID)
    }

    /// Marks a lesson not watched; idempotent.
    public func markUnwatched(learner: String, course: String, lesson: String, requestID: String? = nil) async throws(LyceumError) -> ProgressSummary {
        try await write("mark_unwatched", ["learner": .string(learner), "course": .string(course), "lesson": .string(lesson)], requestID)
    }

    /// Saves a playback position, 0 to 86,400 seconds.
    public func savePosition(
        learner: String, course: String, lesson: String, seconds: Double, requestID: String? = nil
    ) async throws(LyceumError) -> ProgressSummary {
        try await write("save_position", [
            "learner": .string(learner), "course": .string(course), "lesson": .string(lesson), "position_seconds": .number(seconds),
        ], requestID)
    }

    /// Submits a quiz attempt: one answer index per question, in quiz order. The server scores it.
    public func submitQuiz(learner: String, course: String, answers: [Int], requestID: String? = nil) async throws(LyceumError) -> QuizSubmission {
        try await caller.call("progress", "submit_quiz", [
            "learner": .string(learner), "course": .string(course), "answers": .integers(answers),
        ], write: .write(requestID))
    }

    /// Everything about `learner` in `course`; a learner who never started gets `started == false`.
    public func get(learner: String, course: String) async throws(LyceumError) -> LearnerProgress {
        try await caller.call("progress", "get", ["learner": .string(learner), "course": .string(course)], as: LearnerProgressResult.self).progress
    }

    /// One page of `learner`'s courses, most recently updated first.
    public func list(learner: String, cursor: String? = nil) async throws(LyceumError) -> ProgressPage {
        try await caller.call("progress", "list", ["learner": .string(learner), "cursor": cursor.parameter])
    }

    /// How the course's learners are doing.
    public func courseStats(course: String) async throws(LyceumError) -> CourseStats {
        try await caller.call("progress", "course_stats", ["course": .string(course)])
    }

    private func write(_ op: String, _ parameters: KeyValuePairs<String, JSONValue?>, _ requestID: String?) async throws(LyceumError) -> ProgressSummary {
        try await caller.call("progress", op, parameters, write: .write(requestID), as: ProgressResult.self).progress
    }
}
