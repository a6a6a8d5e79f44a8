import JSON
import LyceumSupport
import Progress

/// The contract's representations of progress.
extension ProgressSummary {
    /// Writes the summary's members: `course`, `watched_count`, `lesson_count`, `percent`,
    /// `current_lesson`, `completed`, `best_score` (`{score, total}` or null), `updated_at`.
    func write(to writer: inout JSONObjectWriter) {
        writer.member("course", course)
        writer.member("watched_count", watchedCount)
        writer.member("lesson_count", lessonCount)
        writer.member("percent", percent)
        writer.member("current_lesson", currentLesson)
        writer.member("completed", completed)
        if let bestAttempt {
            writer.member("best_score", object: { (best) in
                best.member("score", bestAttempt.score)
                best.member("total", bestAttempt.total)
            })
        } else {
            writer.member("best_score", JSONValue.null)
        }
        writer.member("updated_at", RFC3339.string(millisecondsSince1970: updatedAt))
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
        var writer = JSONObjectWriter()
        writer.member("type", kind.rawValue)
        writer.member("learner", learner)
        writer.member("course", course)
        writer.member("lesson", lesson)
        writer.member("progress", object: summary.write(to:))
        writer.member("completes_course", completesCourse)
        return writer.finish()
    }
}
