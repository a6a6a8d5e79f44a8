import ZeroMQ

/// A 7/MDP client that keeps many requests in flight and hands back each reply with the
/// request it answers.
///
/// Each request in flight has a DEALER of its own, so a reply is matched by the socket it
/// arrives on, whatever order workers finish in, with any conforming broker. Each request is
/// retried the Lazy Pirate way (``ClientConfiguration``). Not thread-safe: use it from one
/// thread.
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

    /// The broker's endpoint.
    public let endpoint: String
    /// Timeout and retries.
    public let configuration: ClientConfiguration
    /// Requests that may be in flight at once.
    public let capacity: Int
    private let slots: [RequestSlot]
    private var completions = FIFO<Completion>()
    private var poller = Poller()
    private var pollerIsStale = true
    private var nextID: UInt64 = 1
    private let clock = ContinuousClock()

    /// Creates a client for the broker at `endpoint`; sockets are opened as requests need them.
    public init(endpoint: String, capacity: Int = 64, configuration: ClientConfiguration = ClientConfiguration(), context: Context) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.capacity = max(1, capacity)
        slots = (0..<max(1, capacity)).map { _ in RequestSlot(context: context, endpoint: endpoint, configuration: configuration) }
    }

    /// Requests sent and not yet handed back by ``receive(timeout:)``.
    public var inFlight: Int { slots.count { !$0.isIdle } + completions.count }

    /// Sends a request without waiting for its reply.
    /// - Throws: ``MajordomoError/Code/tooManyInFlight`` when ``capacity`` requests are in
    ///   flight, ``MajordomoError/Code/invalidArgument`` for an empty service name.
    public func send(_ service: String, body: [[UInt8]]) throws(MajordomoError) -> RequestID {
        guard !service.isEmpty else {
            throw MajordomoError(code: .invalidArgument, endpoint: endpoint, detail: "empty service name")
        }
        guard inFlight < capacity, let slot = slots.first(where: \.isIdle) else {
            throw MajordomoError(code: .tooManyInFlight, service: service, endpoint: endpoint,
                                 detail: "\(capacity) requests are in flight already")
        }
        let id = RequestID(value: nextID)
        nextID += 1
        let request = RequestSlot.Request(
            id: id, service: service, message: ClientMessage(service: Array(service.utf8), body: body),
            deadline: clock.now + configuration.timeout)
        do {
            if try slot.start(request) { pollerIsStale = true }
        } catch {
            throw MajordomoError(error, service: service)
        }
        return id
    }

    /// Waits for the next finished request.
    /// - Parameter timeout: the longest wait; `nil` waits as long as requests are in flight.
    /// - Returns: the completion, or `nil` when none came within `timeout` or nothing is in flight.
    public func receive(timeout: Duration? = nil) throws(MajordomoError) -> Completion? {
        let giveUp = timeout.map { clock.now + $0 }
        do {
            while true {
                if let completion = completions.popFirst() { return completion }
                if slots.allSatisfy(\.isIdle) { return nil }
                try collect(now: clock.now)
                if let completion = completions.popFirst() { return completion }
                var wakeAt = slots.compactMap(\.deadline).min() ?? clock.now
                if let giveUp { wakeAt = min(wakeAt, giveUp) }
                var wait = max(.zero, wakeAt - clock.now)
                // A request waiting for its connection is retried every millisecond.
                if slots.contains(where: \.isUnsent) { wait = min(wait, .milliseconds(1)) }
                if pollerIsStale { try rebuildPoller() }
                try poller.poll(timeout: wait)
                try collect(now: clock.now)
                if let giveUp, clock.now >= giveUp { return completions.popFirst() }
            }
        } catch {
            throw MajordomoError(error)
        }
    }

    /// Closes every socket; requests in flight are abandoned.
    public func close() {
        for slot in slots { slot.close() }
        completions = FIFO()
        poller = Poller()
        pollerIsStale = true
    }

    private func collect(now: ContinuousClock.Instant) throws(ZMQError) {
        for slot in slots where !slot.isIdle {
            guard let request = slot.request else { continue }
            try slot.trySend()
            if let result = try slot.receive() {
                completions.append(Completion(id: request.id, service: request.service, result: result))
                continue
            }
            let (failure, replaced) = try slot.checkDeadline(now: now)
            if replaced { pollerIsStale = true }
            if let failure {
                completions.append(Completion(id: request.id, service: request.service, result: .failure(failure)))
            }
        }
    }

    private func rebuildPoller() throws(ZMQError) {
        poller = Poller()
        for slot in slots {
            if let socket = slot.socket { try poller.add(socket) }
        }
        pollerIsStale = false
    }
}
