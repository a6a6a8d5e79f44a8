import Dispatch
import JSON
import Lifecycle
import Logging
import Progress
import Synchronization
import ZeroMQ

/// Publishes progress events on a PUB socket and answers snapshot requests on a ROUTER socket
/// (the ZeroMQ guide's Clone pattern), with heartbeats; see protocol/events.md.
///
/// Any thread may call ``publish(_:revision:)``: it never waits for subscribers or for the
/// publisher thread. It assigns the next sequence number and updates the snapshot table under
/// one lock, so a snapshot and the sequence number it reports always agree; the thread running
/// ``run()`` owns both sockets and sends the queued messages in sequence order.
public final class EventPublisher: Service {
    /// This publisher's identity, in every event and heartbeat.
    public let source: EventSource
    /// The configuration it was created with.
    public let configuration: EventPublisherConfiguration

    /// Counts since the publisher was created.
    public struct Counters: Sendable, Equatable {
        /// Events given a sequence number.
        public var published: UInt64 = 0
        /// Of those, events dropped because the publisher thread's queue was full.
        public var dropped: UInt64 = 0
        /// Snapshot requests answered, refusals included.
        public var snapshots: UInt64 = 0
    }

    private enum Outgoing {
        case progress(topic: String, tail: [UInt8], sequence: UInt64, courseSequence: UInt64)
        case statements(topic: String, bodies: [[UInt8]])
    }

    private struct Sequencer {
        var sequence: UInt64 = 0
        var courseSequences: [String: UInt64] = [:]
        var table: ProgressTable
        var outbox: [Outgoing] = []
        var counters = Counters()
    }

    private let context: Context
    private let encodedSource: [UInt8]
    private let sequencer: Mutex<Sequencer>
    private let wakeup: Wakeup
    private let stopping = Atomic<Bool>(false)
    private let binding = Mutex<Result<BoundEndpoints, EventsError>?>(nil)
    private let bindingSettled = DispatchSemaphore(value: 0)
    private let logger = Logger(component: "events")

    /// The endpoints a running publisher listens on, wildcard ports resolved.
    public struct BoundEndpoints: Sendable, Equatable {
        /// The PUB socket's bound endpoints.
        public let publish: [String]
        /// The snapshot ROUTER's bound endpoints.
        public let snapshot: [String]
    }

    /// A publisher whose snapshots start from `table` (usually ``ProgressTable/init(records:lessonIDs:)``
    /// over the progress service's state at start) at sequence 0. Sockets are made by ``run()``.
    public init(
        configuration: EventPublisherConfiguration, context: Context, table: ProgressTable = ProgressTable(),
        source: EventSource = .random()
    ) throws(EventsError) {
        guard !configuration.publishEndpoints.isEmpty || !configuration.forwarderEndpoints.isEmpty else {
            throw EventsError(.invalidArgument, "an event publisher needs a publish endpoint or a forwarder endpoint")
        }
        guard configuration.queueCapacity > 0, configuration.sendHighWaterMark >= 0 else {
            throw EventsError(.invalidArgument, "queue capacity must be positive and the high-water mark not negative")
        }
        self.configuration = configuration
        self.context = context
        self.source = source
        encodedSource = JSONValue.string(source.description).serialized()
        sequencer = Mutex(Sequencer(table: table))
        wakeup = try Wakeup()
    }

    /// Publishes `event`, which must describe a durable write, with `revision`: the journal
    /// position that stored it (`CommitTicket.sequence`). Never blocks on subscribers or on the
    /// publisher thread; when its queue is full the event is dropped and counted, and subscribers
    /// see the gap in sequence numbers and repair it from a snapshot.
    public func publish(_ event: ProgressEvent, revision: UInt64) {
        let tail = ProgressEventBody(event, revision: revision).tail
        let topic = EventTopic.progress(course: event.course, learner: event.learner)
        let statements = configuration.xapi.map { XAPIStatements(event, revision: revision, source: source, options: $0).bodies }
        let entry = ProgressEntry(learner: event.learner, course: event.course, revision: revision, summary: event.summary)
        let capacity = configuration.queueCapacity
        let wasIdle = sequencer.withLock { state -> Bool in
            state.sequence += 1
            let courseSequence = state.courseSequences[event.course, default: 0] + 1
            state.courseSequences[event.course] = courseSequence
            state.table.insert(entry)
            state.counters.published += 1
            guard state.outbox.count < capacity else {
                state.counters.dropped += 1
                return false
            }
            let wasIdle = state.outbox.isEmpty
            state.outbox.append(.progress(topic: topic, tail: tail, sequence: state.sequence, courseSequence: courseSequence))
            if let statements { state.outbox.append(.statements(topic: EventTopic.xapi + topic, bodies: statements)) }
            return wasIdle
        }
        if wasIdle { wakeup.signal() }
    }

    /// Counts so far.
    public var counters: Counters { sequencer.withLock { $0.counters } }

    /// The last sequence number assigned.
    public var sequence: UInt64 { sequencer.withLock { $0.sequence } }

    /// Binds and connects, then publishes, answers snapshots and sends heartbeats until
    /// ``shutdown()``; queued events are sent before it returns.
    /// - Throws: ``EventsError`` when an endpoint cannot be bound or connected.
    public func run() throws {
        let publisher: Socket
        let snapshots: Socket
        do {
            publisher = try context.socket(.publisher)
            try publisher.set(.sendHighWaterMark, to: configuration.sendHighWaterMark)
            for endpoint in configuration.publishEndpoints { try publisher.bind(endpoint) }
            for endpoint in configuration.forwarderEndpoints { try publisher.connect(endpoint) }
            snapshots = try context.socket(.router)
            try snapshots.set(.maxMessageSize, to: Int64(SnapshotProtocol.maxPrefixBytes + 64))
            for endpoint in configuration.snapshotEndpoints { try snapshots.bind(endpoint) }
        } catch {
            let failure = EventsError(error)
            settle(.failure(failure))
            logger.error("cannot bind the event endpoints", ["error": failure.description])
            throw failure
        }
        let bound = BoundEndpoints(
            publish: publisher.endpoints.filter { !configuration.forwarderEndpoints.contains($0) }, snapshot: snapshots.endpoints)
        settle(.success(bound))
        logger.info("publishing events", [
            "source": source.description, "publish": bound.publish.joined(separator: ","),
            "forwarders": configuration.forwarderEndpoints.joined(separator: ","), "snapshot": bound.snapshot.joined(separator: ","),
        ])
        let advertised = configuration.advertisedSnapshotEndpoint ?? bound.snapshot.first
        do {
            try serve(publisher: publisher, snapshots: snapshots, advertisedSnapshot: advertised)
        } catch {
            logger.error("event publisher stopped on a socket error", ["error": error.description])
            throw EventsError(error)
        }
        logger.info("event publisher stopped", ["source": source.description, "published": "\(counters.published)"])
    }

    /// Stops the publisher: `run()` sends what is queued and returns.
    public func shutdown() {
        stopping.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// Waits until `run()` has bound its endpoints.
    /// - Returns: the bound endpoints, wildcard ports resolved.
    /// - Throws: the bind failure, or ``EventsError/Code/timedOut`` after `timeout`.
    public func waitUntilBound(timeout: Duration = .seconds(5)) throws(EventsError) -> BoundEndpoints {
        let milliseconds = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard bindingSettled.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else {
            throw EventsError(.timedOut, "the event publisher has not bound its endpoints yet")
        }
        bindingSettled.signal()
        return try binding.withLock { $0! }.get()
    }

    private func settle(_ result: Result<BoundEndpoints, EventsError>) {
        binding.withLock { $0 = result }
        bindingSettled.signal()
    }

    private func serve(publisher: Socket, snapshots: Socket, advertisedSnapshot: String?) throws(ZMQError) {
        var poller = Poller()
        let wakeIndex = poller.add(fileDescriptor: wakeup.fileDescriptor)
        let snapshotIndex = try poller.add(snapshots)
        var nextHeartbeat = ContinuousClock.now
        while true {
            let now = ContinuousClock.now
            if now >= nextHeartbeat {
                try sendHeartbeat(on: publisher, advertisedSnapshot: advertisedSnapshot)
                nextHeartbeat = now + configuration.heartbeatInterval
            }
            try poller.poll(timeout: nextHeartbeat - now)
            if poller.events(at: wakeIndex).contains(.readable) {
                wakeup.reset()
                try sendQueued(on: publisher)
                if stopping.load(ordering: .acquiring) { return }
            }
            if poller.events(at: snapshotIndex).contains(.readable) {
                try answerSnapshots(on: snapshots)
            }
        }
    }

    private func sendQueued(on publisher: Socket) throws(ZMQError) {
        let batch = sequencer.withLock { state in
            defer { state.outbox.removeAll(keepingCapacity: true) }
            return state.outbox
        }
        for message in batch {
            // A PUB socket drops instead of blocking at its high-water mark, so these never wait.
            switch message {
            case .progress(let topic, let tail, let sequence, let courseSequence):
                let body = ProgressEventBody.assemble(tail: tail, sequence: sequence, courseSequence: courseSequence, encodedSource: encodedSource)
                try publisher.send(topic.utf8, options: [.more, .dontWait])
                try publisher.send(body, options: .dontWait)
            case .statements(let topic, let bodies):
                for body in bodies {
                    try publisher.send(topic.utf8, options: [.more, .dontWait])
                    try publisher.send(body, options: .dontWait)
                }
            }
        }
    }

    private func sendHeartbeat(on publisher: Socket, advertisedSnapshot: String?) throws(ZMQError) {
        let (sequence, courses) = sequencer.withLock { ($0.sequence, $0.courseSequences) }
        let body: JSONValue = [
            "source": .string(source.description), "seq": .integer(Int(clamping: sequence)),
            "course_seq": Self.json(courses), "snapshot": JSONValue(advertisedSnapshot),
            "time": .string(EventTime.rfc3339(EventTime.nowMilliseconds())),
        ]
        try publisher.send(EventTopic.heartbeat.utf8, options: [.more, .dontWait])
        try publisher.send(body.serialized(), options: .dontWait)
    }

    private func answerSnapshots(on router: Socket) throws(ZMQError) {
        while let frames = try router.receiveMultipart(options: .dontWait) {
            guard let identity = frames.first else { continue }
            let reply: [[UInt8]]
            switch snapshotReply(to: Array(frames.dropFirst())) {
            case .success(let body): reply = [identity, Array(SnapshotProtocol.snapshotCommand.utf8), body]
            case .failure(let error):
                let body: JSONValue = ["error": .string(error.code.rawValue), "message": .string(error.detail)]
                reply = [identity, Array(SnapshotProtocol.errorCommand.utf8), body.serialized()]
            }
            sequencer.withLock { $0.counters.snapshots += 1 }
            // A ROUTER drops replies to peers that are gone or too slow; it never blocks here.
            try router.send(multipart: reply, options: .dontWait)
        }
    }

    private func snapshotReply(to frames: [[UInt8]]) -> Result<[UInt8], EventsError> {
        guard frames.count == 2, frames[0] == Array(SnapshotProtocol.snapshotCommand.utf8) else {
            return .failure(EventsError(.malformed, "a snapshot request is two frames: SNAPSHOT and a topic prefix"))
        }
        let prefix = String(decoding: frames[1], as: UTF8.self)
        guard prefix.hasPrefix(EventTopic.progress), Array(prefix.utf8) == frames[1] else {
            return .failure(EventsError(.malformed, "the topic prefix must be UTF-8 and start with \(EventTopic.progress)"))
        }
        let (sequence, courses, table) = sequencer.withLock { ($0.sequence, $0.courseSequences, $0.table) }
        let entries = table.entries(matching: prefix).map { topic, entry -> JSONValue in
            [
                "topic": .string(topic), "learner": .string(entry.learner), "course": .string(entry.course),
                "revision": .integer(Int(clamping: entry.revision)), "progress": entry.summary.eventJSON,
            ]
        }
        let body: JSONValue = [
            "source": .string(source.description), "seq": .integer(Int(clamping: sequence)), "prefix": .string(prefix),
            "course_seq": Self.json(courses), "entries": .array(entries),
        ]
        return .success(body.serialized())
    }

    private static func json(_ sequences: [String: UInt64]) -> JSONValue {
        .object(JSONObject(sequences.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .integer(Int(clamping: $0.value))) }))
    }
}
