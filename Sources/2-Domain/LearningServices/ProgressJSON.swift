import JSON
import LyceumSupport
import Progress

/// The contract's representations of progress.
extension ProgressSummary {
    var json: JSONValue {
        [
            "course": .string(course), "watched_count": .integer(watchedCount), "lesson_count": .integer(lessonCount),
            "percent": .integer(percent), "current_lesson": JSONValue(currentLesson), "completed": .bool(completed),
            "best_score": bestAttempt.map { ["score": .integer($0.score), "total": .integer($0.total)] } ?? .null,
            "updated_at": .string(RFC3339.string(millisecondsSince1970: updatedAt)),
        ]
    }
}

extension QuizAttempt {
    var json: JSONValue {
        [
            "score": .integer(score), "total": .integer(total), "wrong": .array(wrong.map(JSONValue.string)),
            "answers": .array(answers.map(JSONValue.integer)), "submitted_at": .string(RFC3339.string(millisecondsSince1970: submittedAt)),
        ]
    }
}

extension ProgressEvent {
    /// The event as a compact JSON object, ready to publish:
    /// `{"type", "learner", "course", "lesson", "progress": <summary>, "completes_course"}`.
    public var payload: [UInt8] {
        let value: JSONValue = [
            "type": .string(kind.rawValue), "learner": .string(learner), "course": .string(course), "lesson": JSONValue(lesson),
            "progress": summary.json, "completes_course": .bool(completesCourse),
        ]
        return value.serialized()
    }
}
