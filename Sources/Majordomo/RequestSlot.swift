import ZeroMQ

/// One request in flight on a DEALER of its own, retried the Lazy Pirate way: after a
/// timeout the socket is closed and the request sent again on a new one, so that a late
/// reply can never be taken for another request's. Works with any conforming broker.
final class RequestSlot {
    struct Request {
        let service: String
        let message: ClientMessage
        var attempt = 1
        var deadline: ContinuousClock.Instant
        /// Whether the current attempt's request has left, which needs a connection.
        var sent = false
        /// Whether any attempt found a connection to the broker.
        var reachedBroker = false
    }

    private let context: Context
    private let endpoint: String
    private let configuration: ClientConfiguration
    private(set) var socket: Socket?
    private(set) var request: Request?

    init(context: Context, endpoint: String, configuration: ClientConfiguration) {
        self.context = context
        self.endpoint = endpoint
        self.configuration = configuration
    }

    /// Whether the request waits for a connection to be sent.
    var isUnsent: Bool { request.map { !$0.sent } ?? false }

    var deadline: ContinuousClock.Instant? { request?.deadline }

    /// Starts a request, replacing any the slot had.
    func start(_ new: Request) throws(ZMQError) {
        request = new
        if try openSocketIfNeeded(), let socket {
            // A new socket connects in the background; waiting briefly for it lets the request
            // leave now rather than at the caller's next receive.
            var poller = Poller()
            try poller.add(socket, events: .writable)
            try poller.poll(timeout: min(configuration.timeout, Self.connectionWait))
        }
        try trySend()
    }

    /// The longest a new request waits in ``start(_:)`` for a new socket's connection.
    private static let connectionWait = Duration.milliseconds(100)

    /// Sends the current attempt when a connection is there; with `ZMQ_IMMEDIATE` nothing is
    /// queued before one is.
    func trySend() throws(ZMQError) {
        guard let socket, var current = request, !current.sent else { return }
        if try socket.send(multipart: current.message.frames, options: .dontWait) {
            current.sent = true
            current.reachedBroker = true
            request = current
        }
    }

    /// Reads what arrived; a reply for the request in hand completes it, anything else is dropped.
    func receive() throws(ZMQError) -> Result<[[UInt8]], MajordomoError>? {
        guard let socket else { return nil }
        while let frames = try socket.receiveMultipart(options: .dontWait) {
            guard let current = request else { continue }
            let reply: ClientMessage
            do { reply = try ClientMessage(frames: frames[...]) } catch { continue }
            // A reply naming another service is not this request's.
            guard reply.service == current.message.service else { continue }
            request = nil
            if let rejection = BrokerRejection(body: reply.body) {
                return .failure(rejection.error(service: current.service, endpoint: endpoint))
            }
            return .success(reply.body)
        }
        return nil
    }

    /// Retries the request on a new socket when its attempt is past its deadline.
    /// - Returns: the failure when no attempt is left.
    func checkDeadline(now: ContinuousClock.Instant) throws(ZMQError) -> MajordomoError? {
        guard var current = request, now >= current.deadline else { return nil }
        socket?.close()
        socket = nil
        guard current.attempt < configuration.attempts else {
            request = nil
            let failure = current.reachedBroker
                ? MajordomoError(code: .timedOut, service: current.service, endpoint: endpoint,
                                 detail: "no reply after \(current.attempt) attempts of \(configuration.timeout)")
                : MajordomoError(code: .brokerUnreachable, service: current.service, endpoint: endpoint,
                                 detail: "no connection after \(current.attempt) attempts of \(configuration.timeout)")
            return failure
        }
        current.attempt += 1
        current.deadline = now + configuration.timeout
        current.sent = false
        request = current
        _ = try openSocketIfNeeded()
        try trySend()
        return nil
    }

    func close() {
        socket?.close()
        socket = nil
        request = nil
    }

    private func openSocketIfNeeded() throws(ZMQError) -> Bool {
        guard socket == nil else { return false }
        let socket = try context.socket(.dealer)
        try socket.set(.immediate, to: true)
        try socket.set(.maxMessageSize, to: configuration.maxFrameSize)
        try socket.connect(endpoint)
        self.socket = socket
        return true
    }
}
