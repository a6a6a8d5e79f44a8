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
        /// When the current attempt stops waiting for a connection (`connectTimeout`).
        var connectionDeadline: ContinuousClock.Instant
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
        try openSocketIfNeeded()
        try trySend()
    }

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
            guard let outcome = ClientSupport.outcome(of: reply, for: current.message, service: current.service, endpoint: endpoint) else {
                continue
            }
            request = nil
            return outcome
        }
        return nil
    }

    /// Retries the request on a new socket when its attempt is past its deadline, or is still
    /// unsent past its connection deadline.
    /// - Returns: the failure when no attempt is left.
    func checkDeadline(now: ContinuousClock.Instant) throws(ZMQError) -> MajordomoError? {
        guard var current = request, now >= current.deadline || (!current.sent && now >= current.connectionDeadline) else { return nil }
        socket?.close()
        socket = nil
        guard current.attempt < configuration.attempts else {
            request = nil
            return ClientSupport.exhausted(service: current.service, endpoint: endpoint, attempts: current.attempt,
                                           configuration, reachedBroker: current.reachedBroker,
                                           connectionWait: configuration.connectionWait)
        }
        current.attempt += 1
        current.deadline = now + configuration.timeout
        current.connectionDeadline = now + configuration.connectionWait
        current.sent = false
        request = current
        try openSocketIfNeeded()
        try trySend()
        return nil
    }

    func close() {
        socket?.close()
        socket = nil
        request = nil
    }

    private func openSocketIfNeeded() throws(ZMQError) {
        if socket == nil { socket = try ClientSupport.connect(context, to: endpoint, configuration) }
    }
}
