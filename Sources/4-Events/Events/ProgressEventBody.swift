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

extension EventStream where Event == ProgressEvent {
    /// The progress service's events, on `progress/<course>/<learner>`: numbered per course too,
    /// served by snapshots, and described by xAPI statements on `xapi/` followed by the topic.
    public static var progress: EventStream<ProgressEvent> {
        EventStream(
            name: "progress", topic: { EventTopic.progress(course: $0.course, learner: $0.learner) }, encode: ProgressEventBody.encode,
            snapshotEntry: { event, revision in
                ProgressEntry(learner: event.learner, course: event.course, revision: revision, summary: event.summary)
            },
            statements: { event, stamp, source, options in XAPIStatements(event, revision: stamp.revision, source: source, options: options).bodies },
            time: nil)
    }
}

/// The body of a progress event (schema `events.progress.json`).
enum ProgressEventBody {
    /// `event` as published with these numbers by `source`.
    static func encode(_ event: ProgressEvent, stamp: EventStamp, source: EventSource) -> [UInt8] {
        // Written directly, not through a `JSONValue`: this runs for every event.
        var writer = JSONObjectWriter(reservingCapacity: 512)
        writer.member("seq", Int(clamping: stamp.sequence))
        writer.member("progress_seq", Int(clamping: stamp.streamSequence))
        writer.member("course_seq", Int(clamping: stamp.courseSequence))
        writer.member("source", source.description)
        writer.member("revision", Int(clamping: stamp.revision))
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
