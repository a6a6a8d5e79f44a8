import EventSubscription
import JSON
import LyceumLifecycle
import LyceumLogging
import LyceumSupport
import Progress
import Synchronization
import ZeroMQ

/// Publishes the events of the streams it is given (``EventStream``: a topic and an encoder per
/// service) on an XPUB socket and answers snapshot requests on a ROUTER socket (the ZeroMQ
/// guide's Clone pattern), with heartbeats; see protocol/events.md.
///
/// Any thread may call ``publish(_:on:revision:)``: it never waits for subscribers or for the
/// publisher thread, and does no encoding. Under one short lock it numbers the event
/// and queues it as a value; an event dropped from a full queue still has its number (subscribers
/// see the gap) and its state still reaches snapshots.
///
/// The thread running ``run()`` owns both sockets. It applies what it takes from the queue to
/// the snapshot table it owns (``SnapshotState``) before it answers snapshots, so a snapshot and
/// the sequence number it reports always agree, then encodes the events and sends them in
/// sequence order. Subscribers see a PUB socket; the XPUB side tells the publisher their
/// subscriptions, so it encodes only events some subscriber takes (an xAPI statement nobody
/// subscribed to costs nothing).
public final class EventPublisher: Component {
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
        /// Snapshot requests answered (one per page), refusals included.
        public var snapshots: UInt64 = 0
        /// Snapshot requests dropped unanswered: the peer had left
        /// ``SnapshotProtocol/maxUnreadRepliesPerPeer`` replies unread, or was gone.
        public var snapshotsDropped: UInt64 = 0
    }

    /// When a publish wakes the publisher thread.
    private enum Wake {
        case notNeeded, now, atEndOfBatch
    }

    /// Events a batch may queue before its publishes wake the publisher thread at once: bounds
    /// how long a long batch delays events, while a short one wakes the thread once.
    public static let maxHeldEvents = 16

    private struct Sequencer {
        var sequence: UInt64 = 0
        /// Each stream's last number, in the order of ``EventPublisher/streams``.
        var streamSequences: [UInt64]
        var courseSequences: [String: UInt64] = [:]
        var queue: [any QueuedEvent] = []
        var dropped = DroppedProgress()
        /// Changes of the snapshot table queued since the last take, in order.
        var snapshotChanges: [SnapshotTableChange] = []
        /// Set by the publisher thread when it found the queue empty and is about to wait; the
        /// next publish clears it and wakes the thread. While it is clear the thread is awake
        /// and will look at the queue again, so publishing makes no system call.
        var publisherIsWaiting = false
        var counters = Counters()
        /// The same counts, pushed to the process's metrics.
        let metrics = EventMetrics()

        /// Counts one more event of `course` and returns its number, hashing the name once for a
        /// course seen before.
        mutating func nextCourseSequence(_ course: String) -> UInt64 {
            guard let index = courseSequences.index(forKey: course) else {
                courseSequences[course] = 1
                return 1
            }
            courseSequences.values[index] += 1
            return courseSequences.values[index]
        }

        /// Numbers `event` and queues it unless the queue is full, and tells when the publisher
        /// thread needs waking: a caller running a batch (``BatchedSignals``) may wake it at the
        /// batch's end, unless that would hold back ``EventPublisher/maxHeldEvents`` events or more.
        mutating func enqueue(_ event: any QueuedEvent, capacity: Int, batching: Bool) -> Wake {
            sequence += 1
            streamSequences[event.streamIndex] += 1
            let courseSequence = event.snapshotEntry.map { nextCourseSequence($0.course) } ?? 0
            event.number(sequence: sequence, streamSequence: streamSequences[event.streamIndex], courseSequence: courseSequence)
            counters.published += 1
            metrics.published.increment()
            guard queue.count < capacity else {
                counters.dropped += 1
                metrics.dropped.increment()
                if let entry = event.snapshotEntry { dropped.add(entry, courseSequence: courseSequence) }
                return .notNeeded
            }
            queue.append(event)
            guard publisherIsWaiting else { return .notNeeded }
            if batching && queue.count < EventPublisher.maxHeldEvents { return .atEndOfBatch }
            publisherIsWaiting = false
            return .now
        }

        /// Clears the waiting mark; tells whether it was set, so the publisher thread needs waking.
        mutating func takeWaiting() -> Bool {
            defer { publisherIsWaiting = false }
            return publisherIsWaiting
        }
    }

    /// The streams this publisher numbers, in the order heartbeats list their numbers.
    public let streams: [any PublishedStream]
    /// The position in ``streams`` of the one that snapshots serve, if any.
    private let snapshotStream: Int?
    private let context: Context
    private let sequencer: Mutex<Sequencer>
    /// The state snapshots start from, handed to the publisher thread's ``SnapshotState``.
    private let initialTable: ProgressTable
    private let wakeup: WakeupPipe
    private let stopping = Atomic<Bool>(false)
    private let rebindRequested = Atomic<Bool>(false)
    private let binding = AwaitedResult<BoundEndpoints, EventsError>()
    private let logger = Logger(component: "events")

    /// The endpoints a running publisher listens on, wildcard ports resolved.
    public struct BoundEndpoints: Sendable, Equatable {
        /// The PUB socket's bound endpoints.
        public let publish: [String]
        /// The snapshot ROUTER's bound endpoints.
        public let snapshot: [String]
    }

    /// A publisher of `streams`, whose heartbeats list their numbers in this order, and whose
    /// snapshots start from `table` (usually ``ProgressTable/init(records:lessonIDs:)`` over the
    /// progress service's state at start) at sequence 0. Sockets are made by ``run()``.
    /// - Throws: ``EventsError/Code/invalidArgument`` for two streams of one name, more than one
    ///   stream that snapshots serve, or a configuration out of its bounds.
    public init(
        configuration: EventPublisherConfiguration, context: Context, streams: [any PublishedStream],
        table: ProgressTable = ProgressTable(), source: EventSource = .random()
    ) throws(EventsError) {
        guard Set(streams.map(\.name)).count == streams.count else {
            throw EventsError(.invalidArgument, "two event streams share a name: \(streams.map(\.name).joined(separator: ", "))")
        }
        guard streams.filter(\.hasSnapshots).count <= 1 else {
            throw EventsError(.invalidArgument, "snapshots serve one event stream at most")
        }
        guard !configuration.publishEndpoints.isEmpty || !configuration.forwarderEndpoints.isEmpty else {
            throw EventsError(.invalidArgument, "an event publisher needs a publish endpoint or a forwarder endpoint")
        }
        guard configuration.queueCapacity > 0, configuration.sendHighWaterMark >= 0 else {
            throw EventsError(.invalidArgument, "queue capacity must be positive and the high-water mark not negative")
        }
        guard SnapshotProtocol.pageBytesRange.contains(configuration.snapshotPageBytes) else {
            throw EventsError(.invalidArgument, "the snapshot page budget must be \(SnapshotProtocol.pageBytesRange) bytes, not \(configuration.snapshotPageBytes)")
        }
        self.configuration = configuration
        self.context = context
        self.source = source
        self.streams = streams
        snapshotStream = streams.firstIndex(where: \.hasSnapshots)
        sequencer = Mutex(Sequencer(streamSequences: Array(repeating: 0, count: streams.count)))
        initialTable = table
        do { wakeup = try WakeupPipe() } catch { throw EventsError(error) }
    }

    /// Publishes `event` of `stream`, which must be one of ``streams``; the event must describe
    /// a durable write, and `revision` is the journal position that stored it
    /// (`CommitTicket.sequence`). It takes the next number among all events and among its
    /// stream's. Never blocks on subscribers or on the publisher thread; when its queue is full
    /// the event is dropped and counted, and subscribers see the gap in sequence numbers and
    /// repair it from a snapshot. Called inside a ``BatchedSignals`` batch, it wakes the
    /// publisher thread at the end of the batch, or once ``maxHeldEvents`` events wait.
    public func publish<Event>(_ event: Event, on stream: EventStream<Event>, revision: UInt64) {
        // A handful of streams, their names short strings compared inline: cheaper than a hash.
        guard let index = streams.firstIndex(where: { $0.name == stream.name }) else {
            logger.error("an event of a stream this publisher was not given is dropped", ["stream": stream.name])
            return
        }
        enqueue(PendingEvent(event, stream: stream, streamIndex: index, revision: revision))
    }

    /// Numbers and queues `event` under the lock, and wakes the publisher thread if it waits:
    /// now, or at the end of the caller's batch.
    private func enqueue(_ event: any QueuedEvent) {
        let capacity = configuration.queueCapacity
        let batching = BatchedSignals.isBatching
        let wake = sequencer.withLock { state in state.enqueue(event, capacity: capacity, batching: batching) }
        switch wake {
        case .notNeeded: break
        case .now: wakeup.signal()
        case .atEndOfBatch:
            BatchedSignals.signal(self) { [self] in
                if sequencer.withLock({ $0.takeWaiting() }) { wakeup.signal() }
            }
        }
    }

    /// Adds `table`'s entries to what snapshots serve, after the events published before: the
    /// state of a partition this process started serving after the publisher started (it moved
    /// here). Its events must be published only after this call.
    public func addSnapshotEntries(_ table: ProgressTable) {
        queue(.add(table))
    }

    /// Removes every entry of `table`'s learners from what snapshots serve, after the events
    /// published before: a partition this process stopped serving (it moved away), once its
    /// last event was published.
    public func removeSnapshotLearners(of table: ProgressTable) {
        queue(.removeLearners(table.learners))
    }

    /// Queues a change of the snapshot table behind the events queued, and wakes the publisher thread.
    private func queue(_ change: SnapshotTableChange) {
        let wake = sequencer.withLock { state in
            state.snapshotChanges.append(change)
            return state.takeWaiting()
        }
        if wake { wakeup.signal() }
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
            publisher = try context.socket(.extendedPublisher)
            try publisher.set(.sendHighWaterMark, to: configuration.sendHighWaterMark)
            try publisher.set(.maxMessageSize, to: EventTopic.maxSubscriptionMessageBytes)
            try publisher.secure(configuration.publisherSecurity)
            for endpoint in configuration.publishEndpoints { try publisher.bind(endpoint) }
            for endpoint in configuration.forwarderEndpoints { try publisher.connect(endpoint) }
            snapshots = try context.socket(.router)
            try snapshots.set(.maxMessageSize, to: SnapshotProtocol.maxRequestFrameBytes)
            try snapshots.set(.sendHighWaterMark, to: SnapshotProtocol.maxUnreadRepliesPerPeer)
            try snapshots.set(.receiveHighWaterMark, to: SnapshotProtocol.maxQueuedRequestsPerPeer)
            // A reply to a peer whose replies wait unread, or that is gone, fails at once instead
            // of being dropped silently: so the page is never built (answerSnapshots).
            try snapshots.set(.routerMandatory, to: true)
            try snapshots.secure(configuration.snapshotSecurity)
            for endpoint in configuration.snapshotEndpoints { try snapshots.bind(endpoint) }
        } catch {
            let failure = EventsError(error)
            binding.settle(.failure(failure))
            logger.error("cannot bind the event endpoints", ["error": failure.description])
            throw failure
        }
        let bound = BoundEndpoints(
            publish: publisher.endpoints.filter { !configuration.forwarderEndpoints.contains($0) }, snapshot: snapshots.endpoints)
        binding.settle(.success(bound))
        logger.info("publishing events", [
            "source": source.description, "publish": bound.publish.joined(separator: ","),
            "forwarders": configuration.forwarderEndpoints.joined(separator: ","), "snapshot": bound.snapshot.joined(separator: ","),
        ])
        let advertised = configuration.advertisedSnapshotEndpoint ?? bound.snapshot.first
        do {
            try serve(publisher: publisher, snapshots: snapshots, bound: bound, advertisedSnapshot: advertised)
        } catch {
            logger.error("event publisher stopped on a socket error", ["error": error.description])
            throw EventsError(error)
        }
        logger.info("event publisher stopped", ["source": source.description, "published": "\(counters.published)"])
    }

    /// Ends every subscriber's and snapshot client's connection by binding the publish and
    /// snapshot endpoints again, on the publisher thread, soon: each peer reconnects and passes
    /// the ZAP handler again. Called after a key reload that revoked a key's `subscribeEvents`,
    /// since ZAP runs only at handshakes. Peers still authorised resubscribe by themselves and
    /// repair any gap from a snapshot.
    public func rebindSubscribers() {
        rebindRequested.store(true, ordering: .releasing)
        wakeup.signal()
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
        guard let bound = binding.wait(timeout: timeout) else {
            throw EventsError(.timedOut, "the event publisher has not bound its endpoints yet")
        }
        return try bound.get()
    }

    private func serve(publisher: Socket, snapshots: Socket, bound: BoundEndpoints, advertisedSnapshot: String?) throws(ZMQError) {
        // One system `poll` on the snapshot socket's ZMQ_FD and the wake-up pipe, and only once
        // the queue is empty: while events keep coming the loop takes them without waiting. The
        // snapshot socket is read until empty on every pass, so it never holds a request its
        // descriptor did not announce when the loop sleeps.
        var waiter = try SocketWaiter(sockets: [snapshots], fileDescriptors: [wakeup.fileDescriptor])
        var nextHeartbeat = ContinuousClock.now
        // Swapped with the queue, so that taking a batch under the lock never allocates or frees.
        var batch: [any QueuedEvent] = []
        var subscriptions = SubscriptionSet()
        var state = SnapshotState(table: initialTable)
        while true {
            let isStopping = stopping.load(ordering: .acquiring)
            if rebindRequested.exchange(false, ordering: .acquiringAndReleasing) {
                try publisher.rebind(bound.publish)
                try snapshots.rebind(bound.snapshot)
                logger.info("event endpoints bound again: every subscriber handshakes anew", ["publish": bound.publish.joined(separator: ","),
                                                                                            "snapshot": bound.snapshot.joined(separator: ",")])
            }
            let now = ContinuousClock.now
            let taken = takeQueued(into: &batch, announcing: now >= nextHeartbeat)
            let queueWasEmpty = batch.isEmpty
            Self.apply(batch, taken, to: &state)
            let requestsWait = try answerSnapshots(on: snapshots, from: &state, sending: &batch)
            // Taken in just before sending, so that no event is skipped for a subscription the
            // socket already knows of.
            while let message = try publisher.receive(options: .dontWait) { subscriptions.apply(message) }
            try send(batch, on: publisher, to: subscriptions)
            batch.removeAll(keepingCapacity: true)
            if let announced = taken.announced {
                try sendHeartbeat(announced, on: publisher, advertisedSnapshot: advertisedSnapshot)
                nextHeartbeat = now + configuration.heartbeatInterval
            }
            guard queueWasEmpty && !requestsWait else { continue }
            if isStopping { return }
            // The take marked this thread as waiting: the next publish writes to the pipe.
            try waiter.waitForDescriptors(timeout: max(nextHeartbeat - ContinuousClock.now, .zero))
            if waiter.descriptorIsReadable(0) { wakeup.reset() }
        }
    }

    /// The last numbers a heartbeat announces.
    private struct Announced {
        var sequence: UInt64
        var streamSequences: [UInt64]
        var courseSequences: [String: UInt64]
    }

    /// What the publisher thread takes from the publishers under the lock.
    private struct Taken {
        /// The last numbers assigned: every event so numbered is in the batch, sent earlier or dropped.
        var sequence: UInt64
        /// The last number of the stream snapshots serve (0 without one).
        var snapshotStreamSequence: UInt64
        /// The state of progress events dropped since the last take, if any.
        var dropped: DroppedProgress?
        /// The snapshot table's changes queued since the last take.
        var snapshotChanges: [SnapshotTableChange] = []
        /// The numbers a heartbeat announces, when one is due.
        var announced: Announced?
    }

    /// Swaps everything queued, oldest first, into `batch` (which must be empty), with the state
    /// of events dropped meanwhile and the last numbers assigned: so a heartbeat sent after the
    /// batch never announces an event still to come, and a snapshot after it covers them all.
    /// When the queue is empty, marks the publisher thread as waiting, so that the next publish
    /// wakes it.
    private func takeQueued(into batch: inout [any QueuedEvent], announcing: Bool) -> Taken {
        sequencer.withLock { state in
            if state.queue.isEmpty { state.publisherIsWaiting = true }
            swap(&state.queue, &batch)
            var taken = Taken(sequence: state.sequence, snapshotStreamSequence: snapshotStream.map { state.streamSequences[$0] } ?? 0)
            if !state.dropped.isEmpty {
                taken.dropped = state.dropped
                state.dropped = DroppedProgress()
            }
            if !state.snapshotChanges.isEmpty { swap(&taken.snapshotChanges, &state.snapshotChanges) }
            if announcing {
                taken.announced = Announced(
                    sequence: state.sequence, streamSequences: state.streamSequences, courseSequences: state.courseSequences)
            }
            return taken
        }
    }

    /// Encodes and sends the events of `batch` that `subscriptions` select; the socket would
    /// drop the others unsent.
    private func send(_ batch: [any QueuedEvent], on publisher: Socket, to subscriptions: SubscriptionSet) throws(ZMQError) {
        for event in batch { try event.send(on: publisher, to: subscriptions, source: source, xapi: configuration.xapi) }
    }

    private func sendHeartbeat(_ announced: Announced, on publisher: Socket, advertisedSnapshot: String?) throws(ZMQError) {
        var body = JSONObject()
        body.append("source", .string(source.description))
        body.append("seq", .integer(Int(clamping: announced.sequence)))
        for (stream, sequence) in zip(streams, announced.streamSequences) {
            body.append(stream.name + "_seq", .integer(Int(clamping: sequence)))
        }
        body.append("course_seq", SnapshotState.json(announced.courseSequences))
        body.append("snapshot", JSONValue(advertisedSnapshot))
        body.append("snapshot_key", JSONValue(configuration.advertisedSnapshotKey))
        body.append("time", .string(RFC3339.string(millisecondsSince1970: RFC3339.currentMillisecondsSince1970())))
        try publisher.send(EventTopic.heartbeat.utf8, options: [.more, .dontWait])
        try publisher.send(JSONValue.object(body).serialized(), options: .dontWait)
    }

    /// Applies a take to the snapshot state: the events in `events` of the stream snapshots
    /// serve, the state of any dropped meanwhile, the table's changes, and the numbers it covers.
    /// The changes go last: a partition's learners leave after its last events (queued before
    /// the change), and its entries, at revision 0, never replace those of its first events.
    private static func apply(_ events: [any QueuedEvent], _ taken: Taken, to state: inout SnapshotState) {
        for event in events {
            if let entry = event.snapshotEntry { state.apply(entry, courseSequence: event.stamp.courseSequence) }
        }
        if let dropped = taken.dropped { state.apply(dropped) }
        for change in taken.snapshotChanges { state.apply(change) }
        state.advance(sequence: taken.sequence, progressSequence: taken.snapshotStreamSequence)
    }

    /// Answers the snapshot requests waiting, up to ``SnapshotProtocol/maxRequestsPerPass``, each
    /// from `state` caught up with what was queued when the request was read (those events join
    /// `batch`, to be sent after the reply): so a page holds every event published before it was
    /// asked for.
    /// - Returns: whether requests may still wait, so that the thread does not sleep on them.
    private func answerSnapshots(on router: Socket, from state: inout SnapshotState, sending batch: inout [any QueuedEvent]) throws(ZMQError) -> Bool {
        for _ in 0..<SnapshotProtocol.maxRequestsPerPass {
            guard let frames = try router.receiveMultipart(options: .dontWait) else { return false }
            guard let identity = frames.first else { continue }
            // The routing id goes first: it is where the ROUTER (mandatory routing) tells that
            // this peer cannot take a reply now, before any work is spent on one.
            guard try sendRoutingID(identity, on: router) else {
                sequencer.withLock { state in
                    state.counters.snapshotsDropped += 1
                    state.metrics.snapshotsDropped.increment()
                }
                continue
            }
            let reply: [[UInt8]]
            do throws(EventsError) {
                let request = try SnapshotRequest(frames: frames.dropFirst())
                var late: [any QueuedEvent] = []
                let taken = takeQueued(into: &late, announcing: false)
                Self.apply(late, taken, to: &state)
                batch.append(contentsOf: late)
                reply = [Array(SnapshotProtocol.snapshotCommand.utf8), state.page(request, budget: configuration.snapshotPageBytes, source: source)]
            } catch {
                let body: JSONValue = ["error": .string(error.code.rawValue), "message": .string(error.detail)]
                reply = [Array(SnapshotProtocol.errorCommand.utf8), body.serialized()]
            }
            sequencer.withLock { state in
                state.counters.snapshots += 1
                state.metrics.snapshots.increment()
            }
            // Once the routing id is accepted the rest of the message is too.
            try router.send(multipart: reply, options: .dontWait)
        }
        return true
    }

    /// Starts a reply to `identity`; `false` when the peer has
    /// ``SnapshotProtocol/maxUnreadRepliesPerPeer`` replies unread or is gone.
    private func sendRoutingID(_ identity: [UInt8], on router: Socket) throws(ZMQError) -> Bool {
        // Reading ZMQ_EVENTS makes libzmq process the commands waiting for the socket, among them
        // the I/O thread's word that earlier replies have left the pipe; a non-blocking send
        // processes them only about once a millisecond, and would drop the request of a peer
        // that reads every reply as soon as it comes.
        _ = try router.events
        do {
            return try router.send(identity, options: [.more, .dontWait])
        } catch where error.code == .hostUnreachable {
            return false
        }
    }
}
