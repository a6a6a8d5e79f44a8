import EventSubscription
import JSON
import Progress

/// Progress events dropped from the publisher thread's full queue: never sent, but their state
/// still belongs in snapshots, so publishers keep it here for the publisher thread to take.
struct DroppedProgress {
    var table = ProgressTable()
    /// Each course's last dropped event's number among that course's events.
    var courseSequences: [String: UInt64] = [:]

    var isEmpty: Bool { table.count == 0 }

    /// Keeps the state of a dropped event: its snapshot entry and its number within its course.
    mutating func add(_ entry: ProgressEntry, courseSequence: UInt64) {
        table.insert(entry)
        courseSequences[entry.course] = max(courseSequences[entry.course] ?? 0, courseSequence)
    }
}

/// A change of the state snapshots serve that is no event: a partition of learners that the
/// process started or stopped holding (a partition move).
enum SnapshotTableChange: Sendable {
    /// Entries loaded from a partition's state, as at start (revision 0).
    case add(ProgressTable)
    /// Every entry of these learners goes.
    case removeLearners(Set<String>)
}

/// What snapshots answer from (the Clone pattern's map), owned by the publisher thread: every
/// learner's progress in every course and the sequence numbers that state corresponds to. It
/// changes only as the thread takes events from its queue, in sequence order, so a publish
/// never pays for it and a snapshot needs no lock.
///
/// It answers in pages of a bounded size, each from the state as it is when asked
/// (protocol/events.md, "Pages"): nothing is kept per subscriber between pages.
struct SnapshotState {
    private var table: ProgressTable
    private var topics = SnapshotTopicIndex()
    private var sequence: UInt64 = 0
    private var progressSequence: UInt64 = 0
    private var courseSequences: [String: UInt64] = [:]

    /// The state at sequence 0: `table`, the progress service's state when publishing starts.
    init(table: ProgressTable) {
        self.table = table
        for match in table.entries(matching: EventTopic.progress) { topics.add(course: match.entry.course, learner: match.entry.learner) }
    }

    /// Applies the entry of an event taken from the queue, numbered `courseSequence` in its course.
    mutating func apply(_ entry: ProgressEntry, courseSequence: UInt64) {
        insert(entry)
        courseSequences[entry.course] = courseSequence
    }

    /// Applies the state of events dropped since the last take.
    mutating func apply(_ dropped: DroppedProgress) {
        for match in dropped.table.entries(matching: EventTopic.progress) { insert(match.entry) }
        courseSequences.merge(dropped.courseSequences, uniquingKeysWith: max)
    }

    private mutating func insert(_ entry: ProgressEntry) {
        if table.insert(entry) { topics.add(course: entry.course, learner: entry.learner) }
    }

    /// Applies a change of the partitions the publisher's process holds.
    mutating func apply(_ change: SnapshotTableChange) {
        switch change {
        case .add(let added):
            for match in added.entries(matching: EventTopic.progress) { insert(match.entry) }
        case .removeLearners(let learners):
            table.removeEntries(ofLearners: learners)
            topics.remove(learners: learners)
        }
    }

    /// Moves the state to the numbers of a take: every event numbered up to them has been
    /// taken (and applied) or dropped (and applied).
    mutating func advance(sequence: UInt64, progressSequence: UInt64) {
        self.sequence = sequence
        self.progressSequence = progressSequence
    }

    /// The body of the page `request` asks for (schema `events.snapshot.json`): the entries under
    /// its prefix after its cursor, in topic order, as many as fit in `budget` bytes of body but
    /// at least one, and the cursor of the next page (`null` on the last).
    mutating func page(_ request: SnapshotRequest, budget: Int, source: EventSource) -> [UInt8] {
        var header = JSONObjectWriter(reservingCapacity: 512)
        header.member("source", source.description)
        header.member("seq", Int(clamping: sequence))
        header.member("progress_seq", Int(clamping: progressSequence))
        header.member("prefix", request.prefix)
        header.member("course_seq", Self.json(courseSequences.filter { Self.prefix(request.prefix, covers: $0.key) }))
        var entries: [UInt8] = [UInt8(ascii: "[")]
        var lastTopic: String?
        var isComplete = true
        // What the body adds to the header besides the entries: the two member names, the
        // array's and the object's closing brackets, and the cursor, counted as the topic of
        // the last entry taken (`null`, on the last page, is shorter).
        let framing = #","next_cursor":,"entries":]}"#.utf8.count
        var cursorBytes: [UInt8] = []
        for place in topics.topics(startingWith: request.prefix, after: request.cursor) {
            guard let entry = table.entry(learner: place.learner, course: place.course) else { continue }
            let encoded = Self.encode(entry, topic: place.topic)
            cursorBytes.removeAll(keepingCapacity: true)
            JSONValue.write(place.topic, to: &cursorBytes)
            let separator = lastTopic == nil ? 0 : 1
            if lastTopic != nil && header.byteCount + framing + cursorBytes.count + entries.count + separator + encoded.count > budget {
                isComplete = false
                break
            }
            if separator == 1 { entries.append(UInt8(ascii: ",")) }
            entries.append(contentsOf: encoded)
            lastTopic = place.topic
        }
        entries.append(UInt8(ascii: "]"))
        header.member("next_cursor", isComplete ? nil : lastTopic)
        header.member("entries", encoded: entries)
        return header.finish()
    }

    /// One entry of a page, as an object.
    private static func encode(_ entry: ProgressEntry, topic: String) -> [UInt8] {
        var object = JSONObjectWriter(reservingCapacity: 384)
        object.member("topic", topic)
        object.member("learner", entry.learner)
        object.member("course", entry.course)
        object.member("revision", Int(clamping: entry.revision))
        object.member("progress") { entry.summary.writeJSON(into: &$0) }
        return object.finish()
    }

    /// Whether a subscription to `prefix` can take events of `course`: its topics and the prefix
    /// agree as far as the shorter goes. A page carries only those courses' numbers.
    private static func prefix(_ prefix: String, covers course: String) -> Bool {
        let coursePrefix = EventTopic.progressPrefix(course: course)
        return coursePrefix.utf8.starts(with: prefix.utf8) || prefix.utf8.starts(with: coursePrefix.utf8)
    }

    /// Sequence numbers by course, as heartbeats and snapshots carry them.
    static func json(_ sequences: [String: UInt64]) -> JSONValue {
        .object(JSONObject(sequences.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .integer(Int(clamping: $0.value))) }))
    }
}
