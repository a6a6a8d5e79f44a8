import JSON
import Progress

/// The JSON representations events use for progress (protocol/events.md, `progress_event.json`).
extension ProgressSummary {
    /// `{"course", "watched_count", "lesson_count", "percent", "current_lesson", "completed", "best_score", "updated_at"}`.
    var eventJSON: JSONValue {
        [
            "course": .string(course), "watched_count": .integer(watchedCount), "lesson_count": .integer(lessonCount),
            "percent": .integer(percent), "current_lesson": JSONValue(currentLesson), "completed": .bool(completed),
            "best_score": bestAttempt.map { ["score": .integer($0.score), "total": .integer($0.total)] } ?? .null,
            "updated_at": .string(EventTime.rfc3339(updatedAt)),
        ]
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
        let value: JSONValue = [
            "seq": .integer(Int(clamping: sequences.sequence)), "progress_seq": .integer(Int(clamping: sequences.progressSequence)),
            "course_seq": .integer(Int(clamping: sequences.courseSequence)), "source": .string(source.description),
            "revision": .integer(Int(clamping: revision)), "type": .string(event.kind.rawValue),
            "learner": .string(event.learner), "course": .string(event.course), "lesson": JSONValue(event.lesson),
            "time": .string(EventTime.rfc3339(event.summary.updatedAt)), "progress": event.summary.eventJSON,
            "completes_course": .bool(event.completesCourse),
            "quiz": event.attempt.map { ["score": .integer($0.score), "total": .integer($0.total)] } ?? .null,
        ]
        return value.serialized()
    }
}
