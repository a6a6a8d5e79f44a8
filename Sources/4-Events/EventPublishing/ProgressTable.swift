import EventSubscription
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
/// learner and course: loaded from the service's state at start, then changed by every published
/// event in sequence order. A copy is O(1) (copy-on-write).
public struct ProgressTable: Sendable {
    /// Not the topic: building a topic string for every insert would cost each publish an allocation.
    /// The strings are hashed once, when the key is made: growing the table rehashes every key,
    /// and that would otherwise hash all their strings again.
    private struct Key: Hashable {
        let course: String
        let learner: String
        private let stringsHash: Int

        init(course: String, learner: String) {
            self.course = course
            self.learner = learner
            var hasher = Hasher()
            hasher.combine(course)
            hasher.combine(learner)
            stringsHash = hasher.finalize()
        }

        static func == (left: Key, right: Key) -> Bool {
            left.stringsHash == right.stringsHash && left.course == right.course && left.learner == right.learner
        }

        func hash(into hasher: inout Hasher) { hasher.combine(stringsHash) }
    }

    private var entries: [Key: ProgressEntry] = [:]

    /// An empty table.
    public init() {}

    /// The table of every record in `records`, measured against the courses' lessons as
    /// `lessonIDs` gives them (in order); revisions are 0.
    public init(records: ProgressRecords, lessonIDs: (_ course: String) -> [String]) {
        for change in records.snapshot() {
            // The records decoded these values when they took them, so they decode again.
            guard let value = change.value, let progress = try? CourseProgress(journalValue: value) else { continue }
            let summary = ProgressSummary(progress, lessonIDs: lessonIDs(progress.course))
            insert(ProgressEntry(learner: progress.learner, course: progress.course, revision: 0, summary: summary))
        }
    }

    /// Number of entries.
    public var count: Int { entries.count }

    /// The entry of `learner` in `course`, if there is one.
    public func entry(learner: String, course: String) -> ProgressEntry? {
        entries[Key(course: course, learner: learner)]
    }

    /// Stores `entry` unless the table holds a newer revision of it: events of one learner in one
    /// course may be published out of their write order, and the revision restores that order.
    /// - Returns: whether the table had no entry of that learner in that course before.
    @discardableResult
    public mutating func insert(_ entry: ProgressEntry) -> Bool {
        let key = Key(course: entry.course, learner: entry.learner)
        // One hash of the two strings for a learner already in the table, the usual case: this
        // runs in every publish, under the publisher's lock.
        guard let index = entries.index(forKey: key) else {
            entries[key] = entry
            return true
        }
        if entries.values[index].revision <= entry.revision { entries.values[index] = entry }
        return false
    }

    /// Stores every entry of `other` as ``insert(_:)`` would: the table of several partitions'
    /// records, whose learners are disjoint, is the union of their tables.
    public mutating func merge(_ other: ProgressTable) {
        for entry in other.entries.values { insert(entry) }
    }

    /// The learners with an entry.
    public var learners: Set<String> { Set(entries.keys.lazy.map(\.learner)) }

    /// Removes every entry of the learners `learners`: the learners of a partition no longer held.
    public mutating func removeEntries(ofLearners learners: Set<String>) {
        entries = entries.filter { !learners.contains($0.key.learner) }
    }

    /// The entries whose topic starts with `prefix`, ordered by topic.
    public func entries(matching prefix: String) -> [(topic: String, entry: ProgressEntry)] {
        entries.values.map { (topic: EventTopic.progress(course: $0.course, learner: $0.learner), entry: $0) }
            .filter { $0.topic.hasPrefix(prefix) }.sorted { $0.topic < $1.topic }
    }
}
