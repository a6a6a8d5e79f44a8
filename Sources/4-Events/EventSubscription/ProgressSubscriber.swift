import ZeroMQ

/// A subscriber that mirrors progress state from one or more publishers (the client side of
/// the Clone pattern, protocol/events.md "Catching up"): it subscribes first, then asks each
/// source for a snapshot, page after page, then applies only events newer than the snapshot's
/// first page; when sequence numbers or heartbeats reveal a gap it takes a fresh snapshot of
/// that source.
///
/// Like its sockets, a subscriber belongs to the thread that created it.
public final class ProgressSubscriber {
    /// Where to subscribe and what to watch.
    public struct Options: Sendable {
        /// The PUB or XPUB endpoints to connect to, every one: the forwarders of several
        /// brokers carry the same sources' events, and an event met twice (same source, a
        /// sequence number already accounted for) is dropped as a duplicate.
        public var eventsEndpoints: [String]
        /// A snapshot endpoint to ask first; sources reached through a forwarder are also
        /// snapshotted at the endpoint their heartbeats advertise.
        public var snapshotEndpoint: String?
        /// Only this course's events; `nil` for every course.
        public var course: String?
        /// How long to wait for each page of a snapshot.
        public var snapshotTimeout: Duration
        /// Messages queued for this subscriber by libzmq before the publisher drops them.
        public var receiveHighWaterMark: Int32
        /// How the SUB and snapshot DEALER sockets authenticate: a CURVE client of the server
        /// key of `serve` (or the broker's forwarder) when CURVE is on. A snapshot endpoint
        /// learnt from heartbeats that advertise a key is reached with the same keys as a
        /// client of that key instead (a worker's own snapshot ROUTER). Default: plaintext.
        public var security: SocketSecurity = .plaintext
        /// A pipe that, once signalled, ends every wait of the subscriber for good: ``poll(timeout:)``
        /// returns at once and snapshot requests fail with `stopped`, so that a stop signal is
        /// obeyed within one step however slow or silent the publishers are. Default: none.
        public var wakeup: WakeupPipe?

        /// Options for these endpoints and filter.
        public init(
            eventsEndpoints: [String], snapshotEndpoint: String? = nil, course: String? = nil,
            snapshotTimeout: Duration = .seconds(2), receiveHighWaterMark: Int32 = 100_000
        ) {
            self.eventsEndpoints = eventsEndpoints
            self.snapshotEndpoint = snapshotEndpoint
            self.course = course
            self.snapshotTimeout = snapshotTimeout
            self.receiveHighWaterMark = receiveHighWaterMark
        }

        /// Options for one events endpoint and this filter.
        public init(
            eventsEndpoint: String, snapshotEndpoint: String? = nil, course: String? = nil,
            snapshotTimeout: Duration = .seconds(2), receiveHighWaterMark: Int32 = 100_000
        ) {
            self.init(eventsEndpoints: [eventsEndpoint], snapshotEndpoint: snapshotEndpoint, course: course,
                      snapshotTimeout: snapshotTimeout, receiveHighWaterMark: receiveHighWaterMark)
        }
    }

    /// Something the subscriber did, for a dashboard to show.
    public enum Update: Sendable {
        /// A new event was applied.
        case event(ReceivedProgressEvent)
        /// A source's state was loaded from a snapshot at `sequence`.
        case synchronized(source: String, sequence: UInt64, entries: Int)
        /// Events of `source` were missed (`expected` was next, `seen` arrived or was announced,
        /// both counted as `progress_seq`, or `course_seq` for a course) and the state was
        /// repaired from a snapshot at `sequence` (`seq`).
        case gapRepaired(source: String, expected: UInt64, seen: UInt64, sequence: UInt64)
        /// Events were missed and could not be repaired yet; a later heartbeat retries.
        case gapUnrepaired(source: String, reason: String)
        /// A heartbeat arrived.
        case heartbeat(ReceivedHeartbeat)
        /// A message that does not follow protocol/events.md was ignored.
        case malformed(String)
    }

    /// One learner's progress in one course as mirrored.
    public struct Entry: Sendable, Equatable {
        /// The learner's id.
        public let learner: String
        /// The course's id.
        public let course: String
        /// The source it came from.
        public let source: String
        /// The journal position of the write that produced it.
        public let revision: UInt64
        /// The learner's progress in the course.
        public let progress: PublishedProgress
    }

    private struct SourceState {
        /// The last progress sequence number (`progress_seq`) accounted for: applied, or covered
        /// by a snapshot. Book events share the source's `seq`, so a progress subscriber counts these.
        var sequence: UInt64 = 0
        /// The same within the watched course, when there is one.
        var courseSequence: UInt64 = 0
        var snapshotEndpoint: String?
        /// The CURVE key its heartbeats advertise beside ``snapshotEndpoint``, when that came from them.
        var snapshotKey: [UInt8]?
        var synchronized = false
        var needsRepair = false
    }

    /// The options it was created with.
    public let options: Options
    /// Whether the options' ``Options/wakeup`` pipe was seen signalled: no wait starts any more.
    public private(set) var isStopped = false
    /// Every mirrored entry, by topic.
    public private(set) var entries: [String: Entry] = [:]
    private var sources: [String: SourceState] = [:]
    private let context: Context
    private let subscriber: Socket
    private let prefix: String

    /// Connects and subscribes to the options' course (or all progress) and to heartbeats.
    /// Call ``synchronize()`` next to load the state.
    public init(context: Context, options: Options) throws(EventsError) {
        self.context = context
        self.options = options
        prefix = EventTopic.progressPrefix(course: options.course)
        do {
            subscriber = try context.socket(.subscriber)
            try subscriber.set(.receiveHighWaterMark, to: options.receiveHighWaterMark)
            try subscriber.set(.maxMessageSize, to: EventTopic.maxFrameBytes)
            try subscriber.set(.subscribe, to: Array(prefix.utf8))
            try subscriber.set(.subscribe, to: Array(EventTopic.heartbeat.utf8))
            try subscriber.secure(options.security)
            for endpoint in options.eventsEndpoints { try subscriber.connect(endpoint) }
        } catch {
            throw EventsError(error)
        }
    }

    /// Loads the state from the options' snapshot endpoint, if there is one. Subscribing came
    /// first, so every event after the snapshot is queued and ``poll(timeout:)`` applies it.
    public func synchronize() throws(EventsError) -> [Update] {
        guard let endpoint = options.snapshotEndpoint else { return [] }
        let snapshot = try requestSnapshot(from: endpoint, security: options.security)
        sources[snapshot.source, default: SourceState()].snapshotEndpoint = endpoint
        apply(snapshot)
        return [.synchronized(source: snapshot.source, sequence: snapshot.sequence, entries: snapshot.entries.count)]
    }

    /// Waits up to `timeout` for messages, then handles every one that is queued.
    /// - Returns: what happened, in order; empty when nothing arrived.
    public func poll(timeout: Duration) throws(EventsError) -> [Update] {
        var updates: [Update] = []
        do throws(ZMQError) {
            guard try wait(for: subscriber, timeout: timeout) else { return [] }
            // Bounded, so that a flood still lets the caller redraw between batches; a heartbeat
            // may wait for a snapshot, so a stop ends the batch too.
            while !isStopped, updates.count < 1000, let frames = try subscriber.receiveMultipart(options: .dontWait) {
                handle(frames, into: &updates)
            }
        } catch {
            throw EventsError(error)
        }
        return updates
    }

    /// Waits up to `timeout` until `socket` is readable (`true`) or the wake-up pipe is
    /// signalled (`false`, and ``isStopped`` from then on).
    private func wait(for socket: Socket, timeout: Duration) throws(ZMQError) -> Bool {
        guard !isStopped else { return false }
        var poller = Poller()
        let socketIndex = try poller.add(socket)
        let wakeupIndex = options.wakeup.map { poller.add(fileDescriptor: $0.fileDescriptor) }
        guard try poller.poll(timeout: timeout) > 0 else { return false }
        if let wakeupIndex, poller.events(at: wakeupIndex).contains(.readable) {
            isStopped = true
            return false
        }
        return poller.events(at: socketIndex).contains(.readable)
    }

    /// The mirrored entries of `course`.
    public func entries(inCourse course: String) -> [Entry] {
        entries.values.filter { $0.course == course }
    }

    private func handle(_ frames: [[UInt8]], into updates: inout [Update]) {
        guard frames.count == 2 else {
            updates.append(.malformed("a message of \(frames.count) frames; events have two"))
            return
        }
        let topic = String(decoding: frames[0], as: UTF8.self)
        do throws(EventsError) {
            if topic == EventTopic.heartbeat {
                let heartbeat = try ReceivedHeartbeat(body: frames[1])
                updates.append(.heartbeat(heartbeat))
                handle(heartbeat, into: &updates)
            } else if topic.hasPrefix(prefix) {
                handle(try ReceivedProgressEvent(topic: topic, body: frames[1]), into: &updates)
            }
        } catch {
            updates.append(.malformed(error.description))
        }
    }

    private func handle(_ event: ReceivedProgressEvent, into updates: inout [Update]) {
        let seen = options.course == nil ? event.progressSequence : event.courseSequence
        if let last = lastSequence(of: event.source) {
            // At or below the last one accounted for: covered by the snapshot, or a duplicate.
            if seen <= last { return }
            if seen > last + 1 {
                repair(event.source, expected: last + 1, seen: seen, into: &updates)
                if let covered = lastSequence(of: event.source), seen <= covered { return }
            }
        }
        var state = sources[event.source] ?? SourceState()
        state.sequence = max(state.sequence, event.progressSequence)
        state.courseSequence = max(state.courseSequence, event.courseSequence)
        sources[event.source] = state
        store(Entry(learner: event.learner, course: event.course, source: event.source, revision: event.revision, progress: event.progress), topic: event.topic)
        updates.append(.event(event))
    }

    private func handle(_ heartbeat: ReceivedHeartbeat, into updates: inout [Update]) {
        let last = lastSequence(of: heartbeat.source)
        var state = sources[heartbeat.source] ?? SourceState()
        if state.snapshotEndpoint == nil {
            state.snapshotEndpoint = heartbeat.snapshotEndpoint
            state.snapshotKey = heartbeat.snapshotKey
        }
        sources[heartbeat.source] = state
        let announced = options.course.map { heartbeat.courseSequences[$0] ?? 0 } ?? heartbeat.progressSequence
        if !state.synchronized && state.snapshotEndpoint != nil {
            // A source first met here or through its events: load what happened before we joined.
            repair(heartbeat.source, expected: (last ?? 0) + 1, seen: announced, into: &updates, firstContact: !state.needsRepair)
        } else if announced > last ?? 0 {
            // Its last events never arrived.
            repair(heartbeat.source, expected: (last ?? 0) + 1, seen: announced, into: &updates)
        }
    }

    /// The last progress sequence number accounted for from `source` (within the course, when filtered);
    /// `nil` for a source not met yet.
    private func lastSequence(of source: String) -> UInt64? {
        sources[source].map { options.course == nil ? $0.sequence : $0.courseSequence }
    }

    /// Replaces `source`'s entries with a snapshot from its endpoint.
    private func repair(_ source: String, expected: UInt64, seen: UInt64, into updates: inout [Update], firstContact: Bool = false) {
        // Stopping: the caller is about to leave, and a repair would only fail.
        guard !isStopped else { return }
        sources[source, default: SourceState()].synchronized = false
        guard let endpoint = sources[source]?.snapshotEndpoint ?? options.snapshotEndpoint else {
            sources[source]?.needsRepair = true
            updates.append(.gapUnrepaired(source: source, reason: "no snapshot endpoint known for this source"))
            return
        }
        do throws(EventsError) {
            let security = sources[source]?.snapshotKey.map(options.security.client(ofServer:)) ?? options.security
            let snapshot = try requestSnapshot(from: endpoint, security: security)
            guard snapshot.source == source else {
                sources[source]?.needsRepair = true
                updates.append(.gapUnrepaired(source: source, reason: "\(endpoint) serves source \(snapshot.source)"))
                return
            }
            apply(snapshot)
            updates.append(firstContact
                ? .synchronized(source: source, sequence: snapshot.sequence, entries: snapshot.entries.count)
                : .gapRepaired(source: source, expected: expected, seen: seen, sequence: snapshot.sequence))
        } catch {
            sources[source]?.needsRepair = true
            updates.append(.gapUnrepaired(source: source, reason: error.description))
        }
    }

    private func apply(_ snapshot: ReceivedSnapshot) {
        entries = entries.filter { !($0.value.source == snapshot.source && $0.key.hasPrefix(prefix)) }
        for entry in snapshot.entries {
            store(Entry(learner: entry.learner, course: entry.course, source: snapshot.source, revision: entry.revision, progress: entry.progress), topic: entry.topic)
        }
        var state = sources[snapshot.source] ?? SourceState()
        state.sequence = snapshot.progressSequence
        state.courseSequence = options.course.map { snapshot.courseSequences[$0] ?? 0 } ?? 0
        state.synchronized = true
        state.needsRepair = false
        sources[snapshot.source] = state
    }

    /// Keeps the newer revision: one learner's events in one course may arrive out of write order.
    private func store(_ entry: Entry, topic: String) {
        if let existing = entries[topic], existing.source == entry.source, existing.revision > entry.revision { return }
        entries[topic] = entry
    }

    /// The whole snapshot of this subscriber's prefix at `endpoint`, reached with `security`,
    /// every page of it; its numbers are the first page's (protocol/events.md, "Pages").
    private func requestSnapshot(from endpoint: String, security: SocketSecurity) throws(EventsError) -> ReceivedSnapshot {
        // One DEALER for the pages of one snapshot, closed when it ends: a reply that arrives
        // after its timeout can never be mistaken for the answer to a later request.
        let dealer: Socket
        do throws(ZMQError) {
            dealer = try context.socket(.dealer)
        } catch {
            throw EventsError(error)
        }
        defer { dealer.close() }
        do throws(ZMQError) {
            try dealer.set(.linger, to: 0)
            try dealer.secure(security)
            try dealer.connect(endpoint)
        } catch {
            throw EventsError(error)
        }
        var snapshot = try requestPage(on: dealer, endpoint: endpoint, after: nil)
        while let cursor = snapshot.nextCursor {
            let page = try requestPage(on: dealer, endpoint: endpoint, after: cursor)
            guard page.source == snapshot.source else {
                throw EventsError(.malformed, endpoint: endpoint, "the snapshot's source changed between pages (a restart?)")
            }
            // Cursors only advance, so a publisher cannot keep this loop going on one page.
            guard page.nextCursor.map({ cursor.utf8.lexicographicallyPrecedes($0.utf8) }) ?? true else {
                throw EventsError(.malformed, endpoint: endpoint, "a snapshot page did not advance its cursor past \(cursor)")
            }
            snapshot = snapshot.appending(page)
        }
        return snapshot
    }

    /// Asks for the page after `cursor` (the first without one) on `dealer` and waits for it.
    private func requestPage(on dealer: Socket, endpoint: String, after cursor: String?) throws(EventsError) -> ReceivedSnapshot {
        let frames: [[UInt8]]?
        do throws(ZMQError) {
            try dealer.send(multipart: [Array(SnapshotProtocol.snapshotCommand.utf8), Array(prefix.utf8)] + (cursor.map { [Array($0.utf8)] } ?? []))
            frames = try wait(for: dealer, timeout: options.snapshotTimeout) ? try dealer.receiveMultipart(options: .dontWait) : nil
        } catch {
            throw EventsError(error)
        }
        if isStopped { throw EventsError(.stopped, endpoint: endpoint, "stopped while waiting for a snapshot page") }
        guard let frames else {
            throw EventsError(.timedOut, endpoint: endpoint, "no snapshot page within \(options.snapshotTimeout)")
        }
        guard frames.count == 2 else {
            throw EventsError(.malformed, endpoint: endpoint, "a snapshot reply of \(frames.count) frames; expected 2")
        }
        guard frames[0] == Array(SnapshotProtocol.snapshotCommand.utf8) else {
            throw EventsError(.malformed, endpoint: endpoint, "snapshot refused: \(String(decoding: frames[1], as: UTF8.self))")
        }
        return try ReceivedSnapshot(body: frames[1])
    }
}
