import ZeroMQ

/// What both clients share: how they connect, read a reply, and fail.
enum ClientSupport {
    /// The longest a new socket's first request waits for the connection before the call
    /// returns and leaves the rest to the caller's next wait.
    static let firstConnectionWait = Duration.milliseconds(100)

    /// A DEALER connected to the broker, with `ZMQ_IMMEDIATE` so that nothing is queued
    /// before a connection exists (which is how "unreachable" is told from "timed out"),
    /// after waiting briefly for that connection; secured as the configuration says.
    static func connect(_ context: Context, to endpoint: String, _ configuration: ClientConfiguration) throws(ZMQError) -> Socket {
        let socket = try context.socket(.dealer)
        try socket.set(.immediate, to: true)
        try socket.set(.maxMessageSize, to: configuration.maxFrameSize)
        try socket.secure(configuration.security)
        try socket.connect(endpoint)
        var connection = Poller()
        try connection.add(socket, events: .writable)
        try connection.poll(timeout: min(configuration.connectionWait, firstConnectionWait))
        return socket
    }

    /// The outcome a reply gives a request for `service`: its body, or the typed error of a
    /// broker rejection; `nil` when the reply names another service and is not the request's.
    static func outcome(of reply: ClientMessage, for request: ClientMessage, service: String, endpoint: String) -> Result<[[UInt8]], MajordomoError>? {
        guard reply.service == request.service else { return nil }
        if let rejection = BrokerRejection(body: reply.body) {
            return .failure(rejection.error(service: service, endpoint: endpoint))
        }
        return .success(reply.body)
    }

    /// The failure of a request whose every attempt passed its deadline; `connectionWait` is
    /// how long each attempt waited for a connection.
    static func exhausted(service: String, endpoint: String, attempts: Int, _ configuration: ClientConfiguration,
                          reachedBroker: Bool, connectionWait: Duration) -> MajordomoError {
        reachedBroker
            ? MajordomoError(code: .timedOut, service: service, endpoint: endpoint,
                             detail: "no reply after \(attempts) attempts of \(configuration.timeout)")
            : MajordomoError(code: .brokerUnreachable, service: service, endpoint: endpoint,
                             detail: "no connection after \(attempts) attempts of \(connectionWait)")
    }
}
