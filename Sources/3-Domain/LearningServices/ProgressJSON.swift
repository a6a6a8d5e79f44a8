import JSON
import LyceumSupport
import Progress

/// The contract's representations of progress.
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
        writer.member("progress", object: { summary.writeJSON(into: &$0) })
        writer.member("completes_course", completesCourse)
        return writer.finish()
    }
}
