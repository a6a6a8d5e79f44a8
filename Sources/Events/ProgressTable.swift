import JSON
import Progress

/// One learner's progress in one course as snapshots serve it.
public struct ProgressEntry: Sendable, Equatable {
    /// The learner's id.
    public let learner: String
    /// The course's id.
    public let course: String
    /// The journal position of the write that produced `summary`; 0 for state loaded at start.
    public let revision: UInt64
    /// The learner's progress in the course.
    public let summary: ProgressSummary

    /// An entry with these fields.
    public init(learner: String, course: String, revision: UInt64, summary: ProgressSummary) {
        self.learner = learner
        self.course = course
        self.revision = revision
        self.summary = summary
    }
}

/// The publisher's copy of the progress state (the Clone pattern's key-value map), keyed by
/// topic: loaded from the service's state at start, then changed by every published event in
/// sequence order. A copy is O(1) (copy-on-write).
public struct ProgressTable: Sendable {
    private var entries: [String: ProgressEntry] = [:]

    /// An empty table.
    public init() {}

    /// The table of every record in `records`, measured against the courses' lessons as
    /// `lessonIDs` gives them (in order); revisions are 0.
    public init(records: ProgressRecords, lessonIDs: (_ course: String) -> [String]) {
        for change in records.snapshot() {
            guard let value = change.value, let progress = CourseProgress(journalValue: value) else { continue }
            let summary = ProgressSummary(progress, lessonIDs: lessonIDs(progress.course))
            insert(ProgressEntry(learner: progress.learner, course: progress.course, revision: 0, summary: summary))
        }
    }

    /// Number of entries.
    public var count: Int { entries.count }

    /// The entry of `learner` in `course`, if there is one.
    public func entry(learner: String, course: String) -> ProgressEntry? {
        entries[EventTopic.progress(course: course, learner: learner)]
    }

    /// Stores `entry` unless the table holds a newer revision of it: events of one learner in one
    /// course may be published out of their write order, and the revision restores that order.
    public mutating func insert(_ entry: ProgressEntry) {
        let topic = EventTopic.progress(course: entry.course, learner: entry.learner)
        if let existing = entries[topic], existing.revision > entry.revision { return }
        entries[topic] = entry
    }

    /// The entries whose topic starts with `prefix`, ordered by topic.
    public func entries(matching prefix: String) -> [(topic: String, entry: ProgressEntry)] {
        entries.filter { $0.key.hasPrefix(prefix) }.map { (topic: $0.key, entry: $0.value) }.sorted { $0.topic < $1.topic }
    }
}
