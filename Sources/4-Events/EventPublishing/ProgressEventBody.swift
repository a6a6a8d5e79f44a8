import EventSubscription
import JSON
import LyceumSupport
import Progress

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
        writer.member("progress") { event.summary.writeJSON(into: &$0, updatedAt: time) }
        writer.member("completes_course", event.completesCourse)
        writer.member("quiz", score: event.attempt.map { ($0.score, $0.total) })
        return writer.finish()
    }
}
