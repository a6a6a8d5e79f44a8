import ZeroMQ

/// A 7/MDP client that keeps many requests in flight on one DEALER and hands back each
/// reply with the request it answers, whatever order workers finish in.
///
/// Each request goes out with one routing frame of its own, a tag, before MDP/Client's empty
/// frame; the broker returns that envelope with the reply, as Lyceum's broker does (and as
/// any broker must for clients behind ROUTER/DEALER proxies). A request without a reply in
/// ``ClientConfiguration/timeout`` is sent again under a new tag, so a late reply to an
/// earlier attempt is recognised and dropped. Not thread-safe: use it from one thread; other
/// threads reach it through ``wakeup``, which ends a ``receive(timeout:)`` at once.
public final class AsyncClient {
    /// Identifies a request sent by ``send(_:body:)``.
    public struct RequestID: Hashable, Sendable {
        /// Increasing from 1 per client.
        public let value: UInt64
    }

    /// A finished request: its reply body or why there is none.
    public struct Completion: Sendable {
        /// The request this completes.
        public let id: RequestID
        /// The service it was sent to.
        public let service: String
        /// The reply body, or a typed error (timed out, broker unreachable, service unknown, …).
        public let result: Result<[[UInt8]], MajordomoError>
    }

    private struct Pending {
        let id: RequestID
        let service: String
        let message: ClientMessage
        var attempt = 1
        var deadline: ContinuousClock.Instant
        /// Whether any attempt found a connection to the broker.
        var reachedBroker = false
    }

    /// The broker's endpoint.
    public let endpoint: String
    /// Timeout and retries.
    public let configuration: ClientConfiguration
    /// Requests that may be in flight at once.
    public let capacity: Int
    /// A pipe that other threads signal to end a ``receive(timeout:)`` early (with `nil`), so
    /// that the owning thread can send what they queued; `nil` when only timeouts end it.
    public let wakeup: WakeupPipe?
    private let context: Context
    private var socket: Socket?
    /// Requests in flight by the tag of their current attempt.
    private var pending: [UInt64: Pending] = [:]
    /// Tags whose attempt waits for a connection, oldest first.
    private var unsent = FIFO<UInt64>()
    private var completions = FIFO<Completion>()
    /// When deadlines must be looked at next: the earliest one, give or take.
    private var nextSweep: ContinuousClock.Instant
    private var nextTag: UInt64 = 1
    private var nextID: UInt64 = 1
    private let clock = ContinuousClock()

    /// Creates a client for the broker at `endpoint`; the socket is opened by the first request.
    /// A `wakeup` pipe, when given, is watched beside the socket (see ``wakeup``).
    public init(endpoint: String, capacity: Int = 64, configuration: ClientConfiguration = ClientConfiguration(), context: Context,
                wakeup: WakeupPipe? = nil) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.capacity = max(1, capacity)
        self.context = context
        self.wakeup = wakeup
        nextSweep = clock.now
    }

    /// Requests sent and not yet handed back by ``receive(timeout:)``.
    public var inFlight: Int { pending.count + completions.count }

    /// Sends a request without waiting for its reply.
    /// - Throws: ``MajordomoError/Code/tooManyInFlight`` when ``capacity`` requests are in
    ///   flight, ``MajordomoError/Code/invalidArgument`` for an empty service name or one
    ///   that ``MDP/serviceNameProblem(_:)`` refuses.
    public func send(_ service: String, body: [[UInt8]]) throws(MajordomoError) -> RequestID {
        guard !service.isEmpty else {
            throw MajordomoError(code: .invalidArgument, endpoint: endpoint, detail: "empty service name")
        }
        if let problem = MDP.serviceNameProblem(service.utf8) {
            throw MajordomoError(code: .invalidArgument, endpoint: endpoint, detail: "the service name \(problem)")
        }
        guard inFlight < capacity else {
            throw MajordomoError(code: .tooManyInFlight, service: service, endpoint: endpoint,
                                 detail: "\(capacity) requests are in flight already")
        }
        let id = RequestID(value: nextID)
        nextID += 1
        let request = Pending(id: id, service: service, message: ClientMessage(service: Array(service.utf8), body: body),
                              deadline: clock.now + configuration.timeout)
        do {
            try openSocketIfNeeded()
            try transmit(request)
        } catch {
            throw MajordomoError(error, service: service)
        }
        nextSweep = min(nextSweep, request.deadline)
        return id
    }

    /// Waits for the next finished request.
    /// - Parameter timeout: the longest wait; `nil` waits as long as requests are in flight.
    /// - Returns: the completion, or `nil` when none came within `timeout`, nothing is in
    ///   flight, or ``wakeup`` was signaled (the pipe is then emptied).
    public func receive(timeout: Duration? = nil) throws(MajordomoError) -> Completion? {
        try Self.receive(from: [self], timeout: timeout)?.completion
    }

    /// Waits for the next finished request of any of `clients`, watching all their sockets at
    /// once: requests left waiting on one broker's socket get their replies while new ones go
    /// to another's. Every client must belong to the calling thread.
    /// - Parameter timeout: the longest wait; `nil` waits as long as requests are in flight.
    /// - Returns: the completion and the client that sent its request, or `nil` when none came
    ///   within `timeout`, none of them has anything in flight, or the ``wakeup`` of one was
    ///   signaled (every signaled pipe is then emptied).
    public static func receive(from clients: [AsyncClient], timeout: Duration? = nil) throws(MajordomoError)
        -> (client: AsyncClient, completion: Completion)?
    {
        let clock = ContinuousClock()
        let giveUp = timeout.map { clock.now + $0 }
        do {
            while true {
                var poller = Poller()
                var wakeAt = giveUp
                var watching = false
                var wakeups: [(index: Int, pipe: WakeupPipe)] = []
                for client in clients {
                    if let completion = try client.advance() { return (client, completion) }
                    guard let socket = client.socket, let due = client.nextWake(now: clock.now) else { continue }
                    try poller.add(socket)
                    watching = true
                    wakeAt = min(wakeAt ?? due, due)
                    // Clients may share one pipe, which is watched once.
                    if let wakeup = client.wakeup, !wakeups.contains(where: { $0.pipe === wakeup }) {
                        wakeups.append((poller.add(fileDescriptor: wakeup.fileDescriptor), wakeup))
                    }
                }
                guard watching else { return nil }
                let now = clock.now
                if let giveUp, now >= giveUp { return nil }
                try poller.poll(timeout: wakeAt.map { max(.zero, $0 - now) })
                let signaled = wakeups.filter { poller.events(at: $0.index).contains(.readable) }
                if !signaled.isEmpty {
                    for wakeup in signaled { wakeup.pipe.reset() }
                    return nil
                }
            }
        } catch {
            throw MajordomoError(error)
        }
    }

    /// Does what is due without waiting: reads the replies that arrived, sends attempts that
    /// waited for the connection, retries or fails requests past their deadline.
    /// - Returns: the oldest completion not yet handed back, if any.
    private func advance() throws(ZMQError) -> Completion? {
        while true {
            if let completion = completions.popFirst() { return completion }
            guard !pending.isEmpty, let socket else { return nil }
            try drainReplies(from: socket)
            if let completion = completions.popFirst() { return completion }
            try sendWaitingRequests(on: socket)
            let now = clock.now
            guard now >= nextSweep else { return nil }
            try sweep(now: now)
        }
    }

    /// When ``advance()`` has something to do even if no reply comes; `nil` when nothing is in flight.
    private func nextWake(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard !pending.isEmpty, socket != nil else { return nil }
        // A request waiting for its connection is retried every millisecond.
        return unsent.isEmpty ? nextSweep : min(nextSweep, now + .milliseconds(1))
    }

    /// Closes the socket; requests in flight are abandoned.
    public func close() {
        socket?.close()
        socket = nil
        pending = [:]
        unsent = FIFO()
        completions = FIFO()
    }

    private func openSocketIfNeeded() throws(ZMQError) {
        guard socket == nil else { return }
        socket = try ClientSupport.connect(context, to: endpoint, configuration)
    }

    /// Sends an attempt under a new tag, or queues it until a connection exists.
    private func transmit(_ request: Pending) throws(ZMQError) {
        let tag = nextTag
        nextTag += 1
        pending[tag] = request
        do {
            // Attempts leave in order: none overtakes one still waiting for the connection.
            if unsent.isEmpty, try sendAttempt(tag) { return }
        } catch {
            pending[tag] = nil
            throw error
        }
        unsent.append(tag)
    }

    /// - Returns: whether the attempt left; `false` while there is no connection.
    private func sendAttempt(_ tag: UInt64) throws(ZMQError) -> Bool {
        guard let socket, var request = pending[tag] else { return true }
        let envelope = withUnsafeBytes(of: tag.bigEndian) { Array($0) }
        guard try socket.send(multipart: [envelope] + request.message.frames, options: .dontWait) else { return false }
        if !request.reachedBroker {
            request.reachedBroker = true
            pending[tag] = request
        }
        return true
    }

    private func sendWaitingRequests(on socket: Socket) throws(ZMQError) {
        while let tag = unsent.first {
            guard try sendAttempt(tag) else { return }
            _ = unsent.popFirst()
        }
    }

    /// Reads every reply that arrived; replies to no current attempt, or naming another
    /// service, are dropped.
    private func drainReplies(from socket: Socket) throws(ZMQError) {
        while let frames = try socket.receiveMultipart(options: .dontWait) {
            guard frames[0].count == 8 else { continue }
            let tag = frames[0].withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
            guard let request = pending[tag] else { continue }
            let reply: ClientMessage
            do { reply = try ClientMessage(frames: frames[1...]) } catch { continue }
            guard let result = ClientSupport.outcome(of: reply, for: request.message, service: request.service, endpoint: endpoint) else {
                continue
            }
            pending[tag] = nil
            completions.append(Completion(id: request.id, service: request.service, result: result))
        }
    }

    /// Retries or fails every request past its deadline, and schedules the next sweep.
    private func sweep(now: ContinuousClock.Instant) throws(ZMQError) {
        var earliest = now + configuration.timeout
        for (tag, request) in pending {
            guard now >= request.deadline else {
                earliest = min(earliest, request.deadline)
                continue
            }
            pending[tag] = nil
            unsent.removeAll { $0 == tag }
            guard request.attempt < configuration.attempts else {
                let failure = ClientSupport.exhausted(service: request.service, endpoint: endpoint, attempts: request.attempt,
                                                      configuration, reachedBroker: request.reachedBroker,
                                                      connectionWait: configuration.timeout)
                completions.append(Completion(id: request.id, service: request.service, result: .failure(failure)))
                continue
            }
            var retry = request
            retry.attempt += 1
            retry.deadline = now + configuration.timeout
            try transmit(retry)
            earliest = min(earliest, retry.deadline)
        }
        nextSweep = earliest
    }
}
