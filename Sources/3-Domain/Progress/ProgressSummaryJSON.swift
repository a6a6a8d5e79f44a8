import JSON
import LyceumSupport

/// The contract's JSON for a summary of progress (protocol/README.md, protocol/events.md).
extension ProgressSummary {
    /// Writes `"course", "watched_count", "lesson_count", "percent", "current_lesson", "completed",
    /// "best_score", "updated_at"`: the `progress` object of write replies, list pages, events and
    /// snapshot entries.
    /// - Parameter updatedAt: `updatedAt` already formatted, when the caller has it.
    public func writeJSON(into writer: inout JSONObjectWriter, updatedAt formatted: String? = nil) {
        writer.member("course", course)
        writer.member("watched_count", watchedCount)
        writer.member("lesson_count", lessonCount)
        writer.member("percent", percent)
        writer.member("current_lesson", currentLesson)
        writer.member("completed", completed)
        writer.member("best_score", score: bestAttempt.map { ($0.score, $0.total) })
        writer.member("updated_at", formatted ?? RFC3339.string(millisecondsSince1970: updatedAt))
    }
}

extension JSONObjectWriter {
    /// `"key": {"score", "total"}` of a quiz attempt, or `"key": null` without one.
    public mutating func member(_ key: StaticString, score: (score: Int, total: Int)?) {
        guard let score else { return member(key, JSONValue.null) }
        member(key) { object in
            object.member("score", score.score)
            object.member("total", score.total)
        }
    }
}
