import Lifecycle
import Logging
import ZeroMQ

/// One 7/MDP worker: a DEALER connected to a broker, serving one request at a time for one service.
///
/// It sends READY, answers each REQUEST with a REPLY to exactly the client address it was
/// given, heartbeats when idle, and on a silent broker or a DISCONNECT starts over on a new
/// socket after an exponential back-off. The time a request takes never counts as broker
/// silence. Run several sessions, each on its own thread (``ServiceThread``), to serve
/// several requests at once; `run()` is meant to be called once.
public final class WorkerSession: Service {
    /// Turns a request body into a reply body; both are opaque frames. An empty reply is sent
    /// as one empty frame.
    public typealias Handler = @Sendable ([[UInt8]]) -> [[UInt8]]

    /// The broker's endpoint.
    public let endpoint: String
    /// The service registered with READY.
    public let service: String
    /// Timings.
    public let configuration: WorkerConfiguration
    private let context: Context
    private let handler: Handler
    private let wakeup: Wakeup

    /// Creates a session that will connect to the broker at `endpoint` when it runs.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` for an empty or `mmi.` service name.
    public init(
        endpoint: String,
        service: String,
        configuration: WorkerConfiguration = WorkerConfiguration(),
        context: Context,
        handler: @escaping Handler
    ) throws(MajordomoError) {
        guard !service.isEmpty, !service.utf8.starts(with: MDP.managementPrefix) else {
            throw MajordomoError(code: .invalidArgument, service: service, endpoint: endpoint,
                                 detail: "a worker's service name must be non-empty and outside mmi.")
        }
        self.endpoint = endpoint
        self.service = service
        self.configuration = configuration
        self.context = context
        self.handler = handler
        wakeup = try Wakeup()
    }

    /// Serves until ``shutdown()``: then finishes the request in hand, replies, sends DISCONNECT
    /// and returns.
    /// - Throws: ``MajordomoError`` when a socket cannot be created or the context is terminated.
    public func run() throws {
        let logger = Logger(component: "worker")
        var delay = configuration.reconnectInitialDelay
        do {
            while !wakeup.isSignaled {
                let outcome = try converse(logger: logger)
                switch outcome {
                case .shutDown:
                    return
                case .lost(let heardFromBroker):
                    // A broker that served or heartbeated proves the endpoint works: start the back-off over.
                    if heardFromBroker { delay = configuration.reconnectInitialDelay }
                    logger.log(.info, "reconnecting", ["endpoint": endpoint, "service": service, "delay_ms": "\(delay.milliseconds)"])
                    try waitForShutdown(upTo: delay)
                    delay = min(delay * 2, configuration.reconnectMaximumDelay)
                }
            }
        } catch {
            logger.log(.error, "worker stopped on a socket error", ["endpoint": endpoint, "service": service, "error": error.description])
            throw MajordomoError(error, service: service)
        }
    }

    /// Asks the session to stop after the request in hand.
    public func shutdown() {
        wakeup.signal()
    }

    private enum Outcome {
        case shutDown
        /// The broker went silent or said DISCONNECT.
        case lost(heardFromBroker: Bool)
    }

    /// One conversation with the broker on a new socket.
    private func converse(logger: Logger) throws(ZMQError) -> Outcome {
        let clock = ContinuousClock()
        let socket = try context.socket(.dealer)
        defer { socket.close() }
        try socket.set(.maxMessageSize, to: configuration.maxFrameSize)
        try socket.connect(endpoint)
        try socket.send(multipart: WorkerCommand.ready(service: Array(service.utf8)).frames, options: .dontWait)
        logger.log(.info, "worker ready", ["endpoint": endpoint, "service": service])

        var waiter = try SocketWaiter(socket, fileDescriptor: wakeup.fileDescriptor)
        // Whether the socket may hold messages its descriptor will not announce: true unless
        // its last use was a receive that found nothing.
        var mayHoldMessages = true
        var brokerExpiry = clock.now + configuration.heartbeat.expiry
        var nextHeartbeat = clock.now + configuration.heartbeat.interval
        var heardFromBroker = false
        var receiveBuffer = ReceiveBuffer()
        while true {
            if wakeup.isSignaled { return try leave(socket, logger: logger) }
            try waiter.wait(timeout: max(.zero, min(brokerExpiry, nextHeartbeat) - clock.now), checkingFirst: mayHoldMessages)
            while let frames = try receiveBuffer.receive(from: socket) {
                let command: WorkerCommand
                do {
                    command = try WorkerCommand(frames: frames[...])
                } catch {
                    logger.log(.warning, "ignored invalid message from the broker", ["endpoint": endpoint, "reason": error.description])
                    continue
                }
                switch command {
                case .request(let client, let body):
                    let reply = handler(body)
                    if try !socket.send(multipart: WorkerCommand.reply(client: client, body: reply).frames, options: .dontWait) {
                        logger.log(.warning, "reply dropped: the broker is not reading", ["endpoint": endpoint, "service": service])
                    }
                    // The request's duration is not broker silence, and the reply is a heartbeat.
                    nextHeartbeat = clock.now + configuration.heartbeat.interval
                case .heartbeat:
                    break
                case .disconnect:
                    logger.log(.info, "broker sent DISCONNECT", ["endpoint": endpoint, "service": service])
                    // A broker refusing READY at once gets a growing back-off, not a reconnection storm.
                    return .lost(heardFromBroker: heardFromBroker)
                case .ready, .reply:
                    logger.log(.warning, "ignored a command only workers send", ["endpoint": endpoint, "command": "\(command.kind)"])
                    continue
                }
                heardFromBroker = true
                brokerExpiry = clock.now + configuration.heartbeat.expiry
                if wakeup.isSignaled { return try leave(socket, logger: logger) }
            }
            mayHoldMessages = false
            let now = clock.now
            if now >= brokerExpiry {
                logger.log(.warning, "broker silent; starting over on a new socket", ["endpoint": endpoint, "service": service])
                return .lost(heardFromBroker: heardFromBroker)
            }
            if now >= nextHeartbeat {
                try socket.send(multipart: WorkerCommand.heartbeat.frames, options: .dontWait)
                nextHeartbeat = now + configuration.heartbeat.interval
                mayHoldMessages = true
            }
        }
    }

    /// Says DISCONNECT and lets it, and the last reply, leave within the shutdown linger.
    private func leave(_ socket: Socket, logger: Logger) throws(ZMQError) -> Outcome {
        try socket.send(multipart: WorkerCommand.disconnect.frames, options: .dontWait)
        try socket.set(.linger, to: Int32(clamping: configuration.shutdownLinger.milliseconds))
        logger.log(.info, "worker shut down", ["endpoint": endpoint, "service": service])
        return .shutDown
    }

    /// Sleeps for `delay`, ending early on shutdown.
    private func waitForShutdown(upTo delay: Duration) throws(ZMQError) {
        var poller = Poller()
        poller.add(fileDescriptor: wakeup.fileDescriptor)
        try poller.poll(timeout: delay)
    }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
