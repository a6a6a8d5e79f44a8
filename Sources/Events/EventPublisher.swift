import Books
import Dispatch
import JSON
import Lifecycle
import Logging
import Progress
import Synchronization
import ZeroMQ

/// Publishes progress and book events on an XPUB socket and answers snapshot requests on a ROUTER
/// socket (the ZeroMQ guide's Clone pattern), with heartbeats; see protocol/events.md.
///
/// Any thread may call ``publish(_:revision:)-(ProgressEvent,_)``, and it never waits for a
/// subscriber. The calling thread itself numbers, encodes and sends the event, under one lock
/// (``EventOutlet``), so an event costs no hand-over to another thread; a thread running a
/// ``BatchedSignals`` batch holds its events until the batch ends and sends them together. The
/// XPUB side tells the publisher which prefixes are subscribed, so an event nobody subscribed to
/// is numbered but never encoded.
///
/// The thread running ``run()`` owns the snapshot ROUTER and the snapshot table
/// (``SnapshotState``). It takes the progress events sent since its last look, with the numbers
/// assigned so far, before it answers a snapshot, so a snapshot and the sequence number it reports
/// always agree; between snapshot requests it wakes only for heartbeats and, every
/// ``maxUnappliedEvents`` events, to keep its table from falling far behind.
public final class EventPublisher: Service {
    /// This publisher's identity, in every event and heartbeat.
    public let source: EventSource
    /// The configuration it was created with.
    public let configuration: EventPublisherConfiguration

    /// Counts since the publisher was created.
    public struct Counters: Sendable, Equatable {
        /// Events given a sequence number.
        public var published: UInt64 = 0
        /// Of those, events numbered while the publisher had no socket to send them on (before
        /// it bound, after it stopped): subscribers cannot have missed them.
        public var unsent: UInt64 = 0
        /// Snapshot requests answered, refusals included.
        public var snapshots: UInt64 = 0
    }

    /// Events a batch may hold before a publish sends them at once: bounds how long a long batch
    /// delays events, while a short one sends them together when it ends.
    public static let maxHeldEvents = 16

    /// Progress events the snapshot table may lag behind before a publish wakes the publisher
    /// thread to apply them (a snapshot request applies them anyway): bounds the memory they hold
    /// and the work a snapshot request finds waiting.
    public static let maxUnappliedEvents = 1024

    private let context: Context
    private let outlet: Mutex<EventOutlet>
    /// The state snapshots start from, handed to the publisher thread's ``SnapshotState``.
    private let initialTable: ProgressTable
    private let wakeup: WakeupPipe
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
        guard configuration.sendHighWaterMark >= 0 else {
            throw EventsError(.invalidArgument, "the high-water mark must not be negative")
        }
        self.configuration = configuration
        self.context = context
        self.source = source
        outlet = Mutex(EventOutlet(source: source, xapi: configuration.xapi))
        initialTable = table
        do { wakeup = try WakeupPipe() } catch { throw EventsError(error) }
    }

    /// Publishes `event`, which must describe a durable write, with `revision`: the journal
    /// position that stored it (`CommitTicket.sequence`). Never blocks on subscribers. Called
    /// inside a ``BatchedSignals`` batch, it sends the event when the batch ends, or once
    /// ``maxHeldEvents`` events wait; otherwise before it returns.
    public func publish(_ event: ProgressEvent, revision: UInt64) {
        hold(.progress(event, revision: revision))
    }

    /// Publishes `event`, which must describe a durable write to a learner's library, with
    /// `revision`: the journal position that stored it. It takes the next number of the same
    /// sequence as progress events; book events have no snapshot (protocol/events.md). Never
    /// blocks, like ``publish(_:revision:)-(ProgressEvent,_)``.
    public func publish(_ event: BookEvent, revision: UInt64) {
        // A deletion leaves no book to take the time of the change from.
        hold(.book(event, revision: revision, time: event.book?.updatedAt ?? EventTime.nowMilliseconds()))
    }

    /// What a publish did with its event.
    private enum Holding {
        /// Held until the end of the caller's batch.
        case heldForBatch
        /// Sent, with every event held before it; the publisher thread may need waking.
        case sent(wakingPublisher: Bool)
    }

    /// Holds `event` until the end of the caller's batch, or sends it (and whatever else is held)
    /// now when the caller runs none or enough events wait.
    private func hold(_ event: EventOutlet.Held) {
        let batching = BatchedSignals.isBatching
        let holding = outlet.withLock { outlet in
            outlet.held.append(event)
            if batching && outlet.held.count < Self.maxHeldEvents { return Holding.heldForBatch }
            return .sent(wakingPublisher: outlet.flush(lagLimit: Self.maxUnappliedEvents))
        }
        switch holding {
        case .heldForBatch:
            BatchedSignals.signal(self) { [self] in
                if outlet.withLock({ $0.flush(lagLimit: Self.maxUnappliedEvents) }) { wakeup.signal() }
            }
        case .sent(let wakingPublisher):
            if wakingPublisher { wakeup.signal() }
        }
    }

    /// Counts so far.
    public var counters: Counters { outlet.withLock { $0.counters } }

    /// The last sequence number assigned.
    public var sequence: UInt64 { outlet.withLock { $0.sequence } }

    /// Binds and connects, then sends what publishers hand it, answers snapshots and sends
    /// heartbeats until ``shutdown()``; events published after it returns reach nobody.
    /// - Throws: ``EventsError`` when an endpoint cannot be bound or connected, or when sending fails.
    public func run() throws {
        let snapshots: Socket
        let publishEndpoints: [String]
        do {
            snapshots = try context.socket(.router)
            try snapshots.set(.maxMessageSize, to: Int64(SnapshotProtocol.maxPrefixBytes + 64))
            for endpoint in configuration.snapshotEndpoints { try snapshots.bind(endpoint) }
            // Made under the lock and kept there: from here on the XPUB socket is used only
            // under it, by whichever thread publishes.
            publishEndpoints = try outlet.withLock { [context, configuration] outlet throws(ZMQError) in
                let publisher = try context.socket(.extendedPublisher)
                try publisher.set(.sendHighWaterMark, to: configuration.sendHighWaterMark)
                for endpoint in configuration.publishEndpoints { try publisher.bind(endpoint) }
                for endpoint in configuration.forwarderEndpoints { try publisher.connect(endpoint) }
                outlet.socket = publisher
                return publisher.endpoints
            }
        } catch {
            let failure = EventsError(error)
            settle(.failure(failure))
            logger.error("cannot bind the event endpoints", ["error": failure.description])
            throw failure
        }
        let bound = BoundEndpoints(publish: publishEndpoints.filter { !configuration.forwarderEndpoints.contains($0) }, snapshot: snapshots.endpoints)
        settle(.success(bound))
        logger.info("publishing events", [
            "source": source.description, "publish": bound.publish.joined(separator: ","),
            "forwarders": configuration.forwarderEndpoints.joined(separator: ","), "snapshot": bound.snapshot.joined(separator: ","),
        ])
        let advertised = configuration.advertisedSnapshotEndpoint ?? bound.snapshot.first
        // Closed under the lock, so no publish is using it meanwhile.
        defer { outlet.withLock { $0.socket = nil } }
        do {
            try serve(snapshots: snapshots, advertisedSnapshot: advertised)
        } catch {
            logger.error("event publisher stopped on a socket error", ["error": error.description])
            throw EventsError(error)
        }
        logger.info("event publisher stopped", ["source": source.description, "published": "\(counters.published)"])
    }

    /// Stops the publisher: `run()` returns soon after.
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

    private func serve(snapshots: Socket, advertisedSnapshot: String?) throws(ZMQError) {
        // One system `poll` on the snapshot socket's ZMQ_FD and the wake-up pipe. The snapshot
        // socket is read until empty on every pass, so it never holds a request its descriptor
        // did not announce when the loop sleeps.
        var waiter = try SocketWaiter(sockets: [snapshots], fileDescriptors: [wakeup.fileDescriptor])
        var nextHeartbeat = ContinuousClock.now
        var state = SnapshotState(table: initialTable)
        // Swapped with the outlet's list, so that taking events under the lock never allocates or frees.
        var spare: [EventOutlet.Unapplied] = []
        while true {
            let isStopping = stopping.load(ordering: .acquiring)
            let now = ContinuousClock.now
            if now >= nextHeartbeat {
                outlet.withLock { $0.sendHeartbeat(advertisedSnapshot: advertisedSnapshot) }
                nextHeartbeat = now + configuration.heartbeatInterval
            }
            try catchUp(&state, spare: &spare)
            try answerSnapshots(on: snapshots, from: &state, spare: &spare)
            if isStopping { return }
            try waiter.waitForDescriptors(timeout: max(nextHeartbeat - ContinuousClock.now, .zero))
            if waiter.descriptorIsReadable(0) { wakeup.reset() }
        }
    }

    /// Applies to `state` every progress event sent since the last call and moves it to the
    /// numbers assigned so far (every event so numbered has been sent), and marks this thread as
    /// about to wait, so that a publish from now on may wake it.
    /// - Throws: the failure that stopped sending, if one did.
    private func catchUp(_ state: inout SnapshotState, spare: inout [EventOutlet.Unapplied]) throws(ZMQError) {
        let numbers = try outlet.withLock { outlet throws(ZMQError) in
            if let failure = outlet.failure { throw failure }
            swap(&outlet.unapplied, &spare)
            outlet.publisherIsWaiting = true
            return (sequence: outlet.sequence, progressSequence: outlet.progressSequence)
        }
        for sent in spare { state.apply(sent.event, revision: sent.revision, sequences: sent.sequences) }
        spare.removeAll(keepingCapacity: true)
        state.advance(sequence: numbers.sequence, progressSequence: numbers.progressSequence)
    }

    /// Answers every snapshot request waiting, each from `state` caught up after the request
    /// arrived: so a snapshot holds every event published before it was asked for.
    private func answerSnapshots(on router: Socket, from state: inout SnapshotState, spare: inout [EventOutlet.Unapplied]) throws(ZMQError) {
        while let frames = try router.receiveMultipart(options: .dontWait) {
            guard let identity = frames.first else { continue }
            let reply: [[UInt8]]
            switch snapshotPrefix(in: Array(frames.dropFirst())) {
            case .success(let prefix):
                try catchUp(&state, spare: &spare)
                reply = [identity, Array(SnapshotProtocol.snapshotCommand.utf8), state.body(prefix: prefix, source: source)]
            case .failure(let error):
                let body: JSONValue = ["error": .string(error.code.rawValue), "message": .string(error.detail)]
                reply = [identity, Array(SnapshotProtocol.errorCommand.utf8), body.serialized()]
            }
            outlet.withLock { $0.countSnapshot() }
            // A ROUTER drops replies to peers that are gone or too slow; it never blocks here.
            try router.send(multipart: reply, options: .dontWait)
        }
    }

    /// The topic prefix a snapshot request asks for, or why it is malformed.
    private func snapshotPrefix(in frames: [[UInt8]]) -> Result<String, EventsError> {
        guard frames.count == 2, frames[0] == Array(SnapshotProtocol.snapshotCommand.utf8) else {
            return .failure(EventsError(.malformed, "a snapshot request is two frames: SNAPSHOT and a topic prefix"))
        }
        let prefix = String(decoding: frames[1], as: UTF8.self)
        guard prefix.hasPrefix(EventTopic.progress), Array(prefix.utf8) == frames[1] else {
            return .failure(EventsError(.malformed, "the topic prefix must be UTF-8 and start with \(EventTopic.progress)"))
        }
        return .success(prefix)
    }
}
