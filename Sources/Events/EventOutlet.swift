import Books
import JSON
import Progress
import ZeroMQ

/// The sending half of an ``EventPublisher``: numbers the events handed to it, encodes and sends
/// those some subscriber takes, and keeps the progress events its snapshot table has yet to apply.
///
/// It lives under the publisher's lock, and whichever thread holds the lock uses the XPUB socket:
/// ZeroMQ lets a socket move between threads across a full memory barrier, which taking the lock
/// is. So the thread that finished a write sends its event, with no hand-over to another thread
/// and no wake-up; and since numbering and sending share one critical section, events leave in
/// sequence order whichever thread publishes them, and a heartbeat never announces an event that
/// is still to be sent.
struct EventOutlet {
    /// An event handed to the publisher and not yet numbered: it waits for the end of the
    /// publishing thread's batch.
    enum Held {
        case progress(ProgressEvent, revision: UInt64)
        case book(BookEvent, revision: UInt64, time: Int64)
    }

    /// A numbered progress event that the publisher thread's ``SnapshotState`` has yet to apply.
    struct Unapplied {
        let event: ProgressEvent
        let revision: UInt64
        let sequences: ProgressSequences
    }

    let source: EventSource
    let xapi: XAPIOptions?
    /// The XPUB socket, from when ``EventPublisher/run()`` has bound it until it stops.
    var socket: Socket?
    /// The first send or receive that failed: the socket is not used again, and the publisher
    /// thread stops with it.
    private(set) var failure: ZMQError?
    /// Events waiting for the end of a batch, oldest first.
    var held: [Held] = []
    /// Numbered progress events, oldest first, that the publisher thread takes for its snapshot table.
    var unapplied: [Unapplied] = []
    /// Set by the publisher thread as it goes to wait; cleared by the flush that wakes it.
    var publisherIsWaiting = false
    private(set) var sequence: UInt64 = 0
    private(set) var progressSequence: UInt64 = 0
    private(set) var booksSequence: UInt64 = 0
    private(set) var courseSequences: [String: UInt64] = [:]
    private(set) var counters = EventPublisher.Counters()
    private var subscriptions = SubscriptionSet()

    init(source: EventSource, xapi: XAPIOptions?) {
        self.source = source
        self.xapi = xapi
    }

    /// Numbers every held event, oldest first, and sends those that some subscription selects.
    /// - Returns: whether the publisher thread must be woken now: it waits while its snapshot
    ///   table lags `lagLimit` events or more, or while sending has failed.
    mutating func flush(lagLimit: Int) -> Bool {
        guard !held.isEmpty else { return false }
        // Taken in just before sending, so that no event is skipped for a subscription the
        // socket already knows of.
        readSubscriptions()
        for event in held {
            switch event {
            case .progress(let event, let revision): send(event, revision: revision)
            case .book(let event, let revision, let time): send(event, revision: revision, time: time)
            }
        }
        held.removeAll(keepingCapacity: true)
        // Cleared by whoever wakes the thread, so that it is woken once.
        guard publisherIsWaiting, unapplied.count >= lagLimit || failure != nil else { return false }
        publisherIsWaiting = false
        return true
    }

    /// Counts a snapshot request answered.
    mutating func countSnapshot() { counters.snapshots += 1 }

    /// Sends a heartbeat announcing the numbers assigned so far, every one of them already sent.
    mutating func sendHeartbeat(advertisedSnapshot: String?) {
        readSubscriptions()
        let body: JSONValue = [
            "source": .string(source.description), "seq": .integer(Int(clamping: sequence)),
            "progress_seq": .integer(Int(clamping: progressSequence)), "books_seq": .integer(Int(clamping: booksSequence)),
            "course_seq": SnapshotState.json(courseSequences), "snapshot": JSONValue(advertisedSnapshot),
            "time": .string(EventTime.rfc3339(EventTime.nowMilliseconds())),
        ]
        _ = transmit { socket, _ throws(ZMQError) in
            try socket.send(EventTopic.heartbeat.utf8, options: [.more, .dontWait])
            try socket.send(body.serialized(), options: .dontWait)
        }
    }

    private mutating func send(_ event: ProgressEvent, revision: UInt64) {
        counters.published += 1
        sequence += 1
        progressSequence += 1
        let sequences = ProgressSequences(sequence: sequence, progressSequence: progressSequence, courseSequence: nextCourseSequence(event.course))
        unapplied.append(Unapplied(event: event, revision: revision, sequences: sequences))
        let topic = EventTopic.progress(course: event.course, learner: event.learner)
        let sent = transmit { [source, xapi] socket, subscriptions throws(ZMQError) in
            if subscriptions.wants(topic.utf8) {
                try socket.send(topic.utf8, options: [.more, .dontWait])
                try socket.send(ProgressEventBody.encode(event, revision: revision, sequences: sequences, source: source), options: .dontWait)
            }
            guard let xapi, subscriptions.wants(EventTopic.xapi.utf8, followedBy: topic.utf8) else { return }
            let statementTopic = EventTopic.xapi + topic
            for statement in XAPIStatements(event, revision: revision, source: source, options: xapi).bodies {
                try socket.send(statementTopic.utf8, options: [.more, .dontWait])
                try socket.send(statement, options: .dontWait)
            }
        }
        if !sent { counters.unsent += 1 }
    }

    private mutating func send(_ event: BookEvent, revision: UInt64, time: Int64) {
        counters.published += 1
        sequence += 1
        booksSequence += 1
        let sequences = BookSequences(sequence: sequence, booksSequence: booksSequence)
        let topic = EventTopic.book(learner: event.learner, bookID: event.bookID)
        let sent = transmit { [source] socket, subscriptions throws(ZMQError) in
            guard subscriptions.wants(topic.utf8) else { return }
            try socket.send(topic.utf8, options: [.more, .dontWait])
            try socket.send(BookEventBody.encode(event, revision: revision, sequences: sequences, source: source, time: time), options: .dontWait)
        }
        if !sent { counters.unsent += 1 }
    }

    /// Runs `body` with the socket and the subscriptions it knows of, and tells whether it ran:
    /// not without a socket, nor after a failure, which it keeps for the publisher thread. An
    /// XPUB socket drops instead of blocking at a subscriber's high-water mark, so this never waits.
    private mutating func transmit(_ body: (Socket, SubscriptionSet) throws(ZMQError) -> Void) -> Bool {
        guard let socket, failure == nil else { return false }
        do { try body(socket, subscriptions) } catch { failure = error }
        return true
    }

    /// Applies the subscription messages the XPUB socket has passed up since the last read.
    private mutating func readSubscriptions() {
        guard let socket, failure == nil else { return }
        do {
            while let message = try socket.receive(options: .dontWait) { subscriptions.apply(message) }
        } catch {
            failure = error
        }
    }

    /// Counts one more event of `course` and returns its number, hashing the name once for a
    /// course seen before.
    private mutating func nextCourseSequence(_ course: String) -> UInt64 {
        guard let index = courseSequences.index(forKey: course) else {
            courseSequences[course] = 1
            return 1
        }
        courseSequences.values[index] += 1
        return courseSequences.values[index]
    }
}
