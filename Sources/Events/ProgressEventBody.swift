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

/// A progress event's body split where the publisher's sequencing goes: everything but `seq`,
/// `source` and `course_seq` is encoded by the calling thread, outside the publisher's lock.
struct ProgressEventBody {
    /// The members after the sequencing ones, from `"revision"` up to the closing brace.
    let tail: [UInt8]

    init(_ event: ProgressEvent, revision: UInt64) {
        let value: JSONValue = [
            "revision": .integer(Int(clamping: revision)), "type": .string(event.kind.rawValue),
            "learner": .string(event.learner), "course": .string(event.course), "lesson": JSONValue(event.lesson),
            "time": .string(EventTime.rfc3339(event.summary.updatedAt)), "progress": event.summary.eventJSON,
            "completes_course": .bool(event.completesCourse),
            "quiz": event.attempt.map { ["score": .integer($0.score), "total": .integer($0.total)] } ?? .null,
        ]
        tail = Array(value.serialized().dropFirst())
    }

    /// The whole body: `{"seq":…,"source":…,"course_seq":…,` then the tail.
    static func assemble(tail: [UInt8], sequence: UInt64, courseSequence: UInt64, encodedSource: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(tail.count + encodedSource.count + 48)
        bytes.append(contentsOf: #"{"seq":"#.utf8)
        JSONValue.write(Int(clamping: sequence), to: &bytes)
        bytes.append(contentsOf: #","source":"#.utf8)
        bytes.append(contentsOf: encodedSource)
        bytes.append(contentsOf: #","course_seq":"#.utf8)
        JSONValue.write(Int(clamping: courseSequence), to: &bytes)
        bytes.append(UInt8(ascii: ","))
        bytes.append(contentsOf: tail)
        return bytes
    }
}
