import JSON
import Progress

/// Progress events dropped from the publisher thread's full queue: never sent, but their state
/// still belongs in snapshots, so publishers keep it here for the publisher thread to take.
struct DroppedProgress {
    var table = ProgressTable()
    /// Each course's last dropped event's number among that course's events.
    var courseSequences: [String: UInt64] = [:]

    var isEmpty: Bool { table.count == 0 }

    mutating func add(_ event: ProgressEvent, revision: UInt64, sequences: ProgressSequences) {
        table.insert(ProgressEntry(learner: event.learner, course: event.course, revision: revision, summary: event.summary))
        courseSequences[event.course] = max(courseSequences[event.course] ?? 0, sequences.courseSequence)
    }
}

/// What snapshots answer from (the Clone pattern's map), owned by the publisher thread: every
/// learner's progress in every course and the sequence numbers that state corresponds to. It
/// changes only as the thread takes events from its queue, in sequence order, so a publish
/// never pays for it and a snapshot needs no lock.
struct SnapshotState {
    private var table: ProgressTable
    private var sequence: UInt64 = 0
    private var progressSequence: UInt64 = 0
    private var courseSequences: [String: UInt64] = [:]

    /// The state at sequence 0: `table`, the progress service's state when publishing starts.
    init(table: ProgressTable) { self.table = table }

    /// Applies a progress event taken from the queue.
    mutating func apply(_ event: ProgressEvent, revision: UInt64, sequences: ProgressSequences) {
        table.insert(ProgressEntry(learner: event.learner, course: event.course, revision: revision, summary: event.summary))
        courseSequences[event.course] = sequences.courseSequence
    }

    /// Applies the state of events dropped since the last take.
    mutating func apply(_ dropped: DroppedProgress) {
        for match in dropped.table.entries(matching: EventTopic.progress) { table.insert(match.entry) }
        courseSequences.merge(dropped.courseSequences, uniquingKeysWith: max)
    }

    /// Moves the state to the numbers of a take: every event numbered up to them has been
    /// taken (and applied) or dropped (and applied).
    mutating func advance(sequence: UInt64, progressSequence: UInt64) {
        self.sequence = sequence
        self.progressSequence = progressSequence
    }

    /// The snapshot body for topic `prefix` (schema `events.snapshot.json`).
    func body(prefix: String, source: EventSource) -> [UInt8] {
        var writer = JSONObjectWriter(reservingCapacity: 4096)
        writer.member("source", source.description)
        writer.member("seq", Int(clamping: sequence))
        writer.member("progress_seq", Int(clamping: progressSequence))
        writer.member("prefix", prefix)
        writer.member("course_seq", Self.json(courseSequences))
        writer.member("entries", objects: table.entries(matching: prefix)) { object, match in
            object.member("topic", match.topic)
            object.member("learner", match.entry.learner)
            object.member("course", match.entry.course)
            object.member("revision", Int(clamping: match.entry.revision))
            object.member("progress") { match.entry.summary.writeEventJSON(into: &$0) }
        }
        return writer.finish()
    }

    /// Sequence numbers by course, as heartbeats and snapshots carry them.
    static func json(_ sequences: [String: UInt64]) -> JSONValue {
        .object(JSONObject(sequences.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .integer(Int(clamping: $0.value))) }))
    }
}
