import EventSubscription
import JSON

/// The Server-Sent Events of the dashboard's stream and their JSON bodies
/// (protocol/events.md, "The dashboard's stream"): one line of JSON per `data:` field, so no
/// body ever holds a raw line break.
enum DashboardMessages {
    /// `id: <seq>`, `event: <name>` and `data: <json>`, ending with the empty line.
    static func frame(id: UInt64, event: String, data: [UInt8]) -> [UInt8] {
        Array("id: \(id)\nevent: \(event)\ndata: ".utf8) + data + Array("\n\n".utf8)
    }

    /// The body of a `progress` event: what happened (with the course's and the lesson's titles
    /// when the catalog has them), and its course's figures after it.
    static func event(_ event: ReceivedProgressEvent, title: String?, lessonTitle: String?, figures: CourseFigures) -> [UInt8] {
        var object = JSONObjectWriter(reservingCapacity: 512)
        object.member("seq", Int(clamping: event.sequence))
        object.member("source", event.source)
        object.member("type", event.type)
        object.member("learner", event.learner)
        object.member("course", event.course)
        object.member("title", title)
        object.member("lesson", event.lesson)
        object.member("lesson_title", lessonTitle)
        object.member("time", event.time)
        object.member("percent", event.progress.percent)
        object.member("completes_course", event.completesCourse)
        if let quiz = event.quiz {
            object.member("quiz") { $0.member("score", quiz.score); $0.member("total", quiz.total) }
        } else {
            object.member("quiz", JSONValue.null)
        }
        object.member("figures") { write(figures, title: title, into: &$0) }
        return object.finish()
    }

    /// The body of a `snapshot` event: every course of the catalog (in catalog order, then any
    /// other course with progress, by id) with its figures, and the most recent events' bodies.
    static func snapshot(
        source: String?, id: UInt64, titles: [CourseTitle], figures: [String: CourseFigures], recent: [[UInt8]]
    ) -> [UInt8] {
        let cataloged = Set(titles.map(\.id))
        let courses = titles.map { (id: $0.id, title: Optional($0.title)) }
            + figures.keys.filter { !cataloged.contains($0) }.sorted().map { (id: $0, title: String?.none) }
        var object = JSONObjectWriter(reservingCapacity: 1024)
        object.member("source", source)
        object.member("seq", Int(clamping: id))
        object.member("courses", objects: courses) { writer, course in
            write(figures[course.id] ?? CourseFigures(course: course.id, entries: [ProgressSubscriber.Entry]()), title: course.title, into: &writer)
        }
        var events: [UInt8] = [UInt8(ascii: "[")]
        for (index, body) in recent.enumerated() {
            if index > 0 { events.append(UInt8(ascii: ",")) }
            events += body
        }
        events.append(UInt8(ascii: "]"))
        object.member("recent", encoded: events)
        return object.finish()
    }

    /// `{"course", "title", "started", "completed", "average_percent", "average_quiz_percent"}`,
    /// the averages to a tenth, `null` when nobody started the course or took the quiz.
    private static func write(_ figures: CourseFigures, title: String?, into object: inout JSONObjectWriter) {
        object.member("course", figures.course)
        object.member("title", title)
        object.member("started", figures.started)
        object.member("completed", figures.completed)
        object.member("average_percent", tenths(figures.averageProgressPercent))
        object.member("average_quiz_percent", tenths(figures.averageQuizPercent))
    }

    /// `value` rounded to a tenth, `null` when there is none.
    private static func tenths(_ value: Double?) -> JSONValue {
        value.map { .double(($0 * 10).rounded() / 10) } ?? .null
    }
}
