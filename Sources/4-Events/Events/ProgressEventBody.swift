import JSON
import LyceumSupport
import Progress

/// The JSON representations events use for progress (protocol/events.md, `progress_event.json`).
extension ProgressSummary {
    /// Writes `"course", "watched_count", "lesson_count", "percent", "current_lesson", "completed",
    /// "best_score", "updated_at"`: the `progress` object of events and snapshot entries.
    /// - Parameter updatedAt: `updatedAt` already formatted, when the caller has it.
    func writeEventJSON(into writer: inout JSONObjectWriter, updatedAt formatted: String? = nil) {
        writer.member("course", course)
        writer.member("watched_count", watchedCount)
        writer.member("lesson_count", lessonCount)
        writer.member("percent", percent)
        writer.member("current_lesson", currentLesson)
        writer.member("completed", completed)
        writer.writeScore("best_score", bestAttempt.map { ($0.score, $0.total) })
        writer.member("updated_at", formatted ?? RFC3339.string(millisecondsSince1970: updatedAt))
    }
}

extension JSONObjectWriter {
    /// `"key": {"score", "total"}`, or `null`.
    fileprivate mutating func writeScore(_ key: StaticString, _ score: (score: Int, total: Int)?) {
        guard let score else { return member(key, JSONValue.null) }
        member(key) { object in
            object.member("score", score.score)
            object.member("total", score.total)
        }
    }
}

/// The sequence numbers a progress event is published with (protocol/events.md, "Sequence numbers").
struct ProgressSequences {
    /// Among all of the source's events.
    var sequence: UInt64
    /// Among the source's progress events.
    var progressSequence: UInt64
    /// Among the source's progress events of the event's course.
    var courseSequence: UInt64
}

/// The body of a progress event (schema `events.progress.json`).
enum ProgressEventBody {
    /// `event` as published with these numbers by `source`.
    static func encode(_ event: ProgressEvent, revision: UInt64, sequences: ProgressSequences, source: EventSource) -> [UInt8] {
        // Written directly, not through a `JSONValue`: this runs for every event.
        var writer = JSONObjectWriter(reservingCapacity: 512)
        writer.member("seq", Int(clamping: sequences.sequence))
        writer.member("progress_seq", Int(clamping: sequences.progressSequence))
        writer.member("course_seq", Int(clamping: sequences.courseSequence))
        writer.member("source", source.description)
        writer.member("revision", Int(clamping: revision))
        writer.member("type", event.kind.rawValue)
        writer.member("learner", event.learner)
        writer.member("course", event.course)
        writer.member("lesson", event.lesson)
        // The event's time is when its summary was updated: formatted once for both.
        let time = RFC3339.string(millisecondsSince1970: event.summary.updatedAt)
        writer.member("time", time)
        writer.member("progress") { event.summary.writeEventJSON(into: &$0, updatedAt: time) }
        writer.member("completes_course", event.completesCourse)
        writer.writeScore("quiz", event.attempt.map { ($0.score, $0.total) })
        return writer.finish()
    }
}
