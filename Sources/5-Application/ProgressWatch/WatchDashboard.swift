import EventSubscription

/// What `lyceum watch` shows: per-course figures from the mirrored state, a feed of recent
/// events and the latest gap warning, as lines of text.
struct WatchDashboard {
    private var feed: [String] = []
    private var warning: String?
    private(set) var eventCount = 0
    let endpoint: String
    let learner: String?
    /// Course titles by id, from the catalog; a course missing here is shown by its id.
    var titles: [String: String] = [:]

    init(endpoint: String, learner: String?) {
        self.endpoint = endpoint
        self.learner = learner
    }

    /// Records an event for the feed.
    mutating func add(_ event: ReceivedProgressEvent) {
        eventCount += 1
        feed.append(WatchDashboard.line(for: event))
        if feed.count > 200 { feed.removeFirst(feed.count - 200) }
    }

    /// Records a warning to show until the next one.
    mutating func warn(_ text: String) { warning = text }

    /// The screen for `entries` in `columns`×`rows`.
    func render(_ entries: [ProgressSubscriber.Entry], columns: Int, rows: Int) -> [String] {
        let shown = entries.filter { learner == nil || $0.learner == learner }
        var lines = ["Lyceum watch  \(endpoint)  \(Set(shown.map(\.learner)).count) learners  \(eventCount) events  (Ctrl-C quits)"]
        // Cut before adding the escapes, so that the terminal's width never splits one.
        lines.append(warning.map { "\u{1B}[7m ! \(String($0.prefix(max(0, columns - 4)))) \u{1B}[0m" } ?? "")
        let nameWidth = max(12, min(30, shown.map { title($0.course).count }.max() ?? 0))
        let barWidth = max(10, min(40, columns - nameWidth - 40))
        lines.append(pad("COURSE", nameWidth) + "  STARTED  COMPLETED " + pad("", barWidth + 2) + "  AVG QUIZ")
        let courses = CourseFigures.byCourse(shown).values.sorted { $0.course < $1.course }
        let courseRows = max(1, rows / 2 - 3)
        for figures in courses.prefix(courseRows) {
            let average = figures.averageQuizPercent.map(format) ?? "     -"
            let filled = figures.started == 0 ? 0 : figures.completed * barWidth / figures.started
            let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled) + "]"
            lines.append(pad(title(figures.course), nameWidth) + "  " + right("\(figures.started)", 7) + "  " + right("\(figures.completed)", 9) + " " + bar + "  " + average)
        }
        if courses.count > courseRows { lines.append("... \(courses.count - courseRows) more courses") }
        lines.append("")
        lines.append("RECENT EVENTS")
        let room = max(0, rows - lines.count)
        lines += feed.suffix(room).reversed()
        return lines
    }

    /// One readable line for an event, as the feed and `--plain` print it.
    static func line(for event: ReceivedProgressEvent) -> String {
        var text = "\(event.time)  \(event.type)  learner=\(event.learner) course=\(event.course)"
        if let lesson = event.lesson { text += " lesson=\(lesson)" }
        if let quiz = event.quiz { text += " score=\(quiz.score)/\(quiz.total)" }
        text += " percent=\(event.progress.percent)"
        if event.completesCourse { text += " COMPLETED" }
        return text + "  seq=\(event.sequence)"
    }

    /// The course's title, or its id when the catalog did not give one.
    private func title(_ course: String) -> String { titles[course] ?? course }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }

    private func right(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    private func format(_ percent: Double) -> String {
        let tenths = Int((percent * 10).rounded())
        return right("\(tenths / 10).\(tenths % 10)%", 6)
    }
}
