import Access
import LyceumLifecycle
import LyceumLogging
import ZeroMQ

/// One session of a ``WorkerPool``: its broker and service, its socket while connected, its
/// timers, its request in hand.
///
/// Used only on the pool's thread and changed for every message: its properties opt out of the
/// runtime's exclusivity checks, which guard nothing here and cost a call each.
final class PoolSession {
    let index: Int
    let route: WorkerPoolEngine.Route
    /// `nil` while the session waits to reconnect, and once it has left.
    @exclusivity(unchecked) var socket: Socket?
    /// The socket's position in the pool's current ``SocketWaiter``.
    @exclusivity(unchecked) var waiterIndex: Int?
    /// Whether the socket may hold messages its `ZMQ_FD` will not announce: true unless its last
    /// use was a receive that found nothing.
    @exclusivity(unchecked) var mayHoldMessages = false
    @exclusivity(unchecked) var brokerExpiry: ContinuousClock.Instant
    @exclusivity(unchecked) var nextHeartbeat: ContinuousClock.Instant
    /// Whether the broker sent a REQUEST or a HEARTBEAT on the current socket: proof that it
    /// registered the session. A DISCONNECT (a broker refusing READY) is no such proof, so it
    /// must not start the back-off over.
    @exclusivity(unchecked) var acceptedByBroker = false
    /// The request being handled: its number within the pool, and the client to reply to.
    @exclusivity(unchecked) var inHand: (request: UInt64, client: [UInt8])?
    /// When a lost session connects again.
    @exclusivity(unchecked) var reconnectAt: ContinuousClock.Instant?
    @exclusivity(unchecked) var reconnectDelay: Duration
    @exclusivity(unchecked) var receiveBuffer = ReceiveBuffer()

    init(index: Int, route: WorkerPoolEngine.Route, now: ContinuousClock.Instant, reconnectDelay: Duration) {
        self.index = index
        self.route = route
        brokerExpiry = now
        nextHeartbeat = now
        self.reconnectDelay = reconnectDelay
        reconnectAt = now
    }
}

/// A ``WorkerPool``'s sessions and loop, confined to the thread running ``WorkerPool/run()``;
/// its per-message state skips exclusivity checks, as ``PoolSession``'s does.
final class WorkerPoolEngine {
    /// A broker, a service to register there, and the handler of its requests: what a session serves.
    struct Route {
        let endpoint: String
        let service: String
        let handler: WorkerPool.Handler
    }

    private let configuration: WorkerConfiguration
    private let context: Context
    private let wakeup: Wakeup
    private let outbox: ReplyOutbox
    private let logger: Logger
    private let clock = ContinuousClock()
    /// `configuration.heartbeat.expiry`, computed once: the product is costly for a per-message value.
    private let heartbeatExpiry: Duration
    private let sessions: [PoolSession]
    /// Longest time one pass spends handling requests before it sends the deferred replies
    /// posted meanwhile: the same bound as the broker's default `maxBatchDuration`.
    private static let batchDuration = Duration.milliseconds(2)
    /// The session each pass visits first: after a pass cut short, the first one it left out.
    @exclusivity(unchecked) private var passStart = 0
    @exclusivity(unchecked) private var requestsTaken: UInt64 = 0
    /// The waiter over the connected sessions' sockets; rebuilt when one connects or closes.
    @exclusivity(unchecked) private var waiter: SocketWaiter?
    /// Set once shutdown began: when the sessions still in hand must have replied.
    @exclusivity(unchecked) private var drainDeadline: ContinuousClock.Instant?
    /// No timer of any session is due before this, so that the loop looks at the sessions'
    /// timers only when one may be due rather than on every wake-up. Replies and messages only
    /// move timers later; whatever moves one earlier lowers it.
    @exclusivity(unchecked) private var timersDue: ContinuousClock.Instant
    /// The brokers and the services, comma-separated, for the log lines about the whole pool.
    private let endpoints: String
    private let services: String

    /// An engine with `sessionsPerRoute` sessions for each of `routes`.
    init(
        routes: [Route], sessionsPerRoute: Int, configuration: WorkerConfiguration, context: Context,
        wakeup: Wakeup, outbox: ReplyOutbox, logger: Logger
    ) {
        self.configuration = configuration
        self.context = context
        self.wakeup = wakeup
        self.outbox = outbox
        self.logger = logger
        heartbeatExpiry = configuration.heartbeat.expiry
        let now = clock.now
        timersDue = now
        let sessionRoutes = routes.flatMap { route in repeatElement(route, count: sessionsPerRoute) }
        sessions = sessionRoutes.enumerated().map { index, route in
            PoolSession(index: index, route: route, now: now, reconnectDelay: configuration.reconnectInitialDelay)
        }
        endpoints = Self.distinct(routes.map(\.endpoint)).joined(separator: ",")
        services = Self.distinct(routes.map(\.service)).joined(separator: ",")
    }

    /// `values` without repeats, in their first order: what the pool's log lines name.
    private static func distinct(_ values: [String]) -> [String] {
        var seen: Set<String> = []
        return values.filter { seen.insert($0).inserted }
    }

    func run() throws(ZMQError) {
        try keepTime(now: clock.now)
        logger.log(.info, "worker ready", ["endpoints": endpoints, "services": services, "sessions": String(sessions.count)])
        while true {
            if wakeup.isSignaled, drainDeadline == nil { try beginDrain() }
            if let drainDeadline {
                if sessions.allSatisfy({ $0.socket == nil }) { break }
                if clock.now >= drainDeadline { abandonRequestsInHand(); break }
            }
            try waitForWork()
            for reply in outbox.hasReplies || waiter?.descriptorIsReadable(0) == true ? outbox.takeAll() : [] {
                let session = sessions[reply.session]
                guard let inHand = session.inHand, inHand.request == reply.request else {
                    logger.log(.debug, "dropped a reply whose request is gone", ["endpoint": session.route.endpoint, "service": session.route.service])
                    continue
                }
                try send(reply.body, to: inHand.client, from: session)
            }
            // One batch: handlers that hand work to other threads wake them once for all sessions.
            // It ends after `batchDuration`, so that costly requests do not hold the deferred
            // replies (sent at the top of the loop) and the journals' wake-ups; the next pass
            // starts with the first session not visited.
            let batchEnd = clock.now + Self.batchDuration
            var nextStart: Int?
            try BatchedSignals.run { () throws(ZMQError) in
                for offset in sessions.indices {
                    let session = sessions[(passStart + offset) % sessions.count]
                    guard session.socket != nil,
                          session.mayHoldMessages || session.waiterIndex.map({ waiter?.socketMayBeReady($0) == true }) == true
                    else { continue }
                    guard clock.now < batchEnd else {
                        session.mayHoldMessages = true
                        nextStart = nextStart ?? session.index
                        continue
                    }
                    try receive(on: session)
                }
            }
            passStart = nextStart ?? passStart
            try keepTime(now: clock.now)
        }
        logger.log(.info, "worker shut down", ["endpoints": endpoints, "services": services])
    }

    // MARK: Waiting

    /// Sleeps until a socket or the outbox needs attention or the next timer is due; does not
    /// sleep while a socket may hold messages its descriptor will not announce.
    private func waitForWork() throws(ZMQError) {
        if waiter == nil {
            var sockets: [Socket] = []
            for session in sessions {
                session.waiterIndex = session.socket.map { socket in
                    sockets.append(socket)
                    return sockets.count - 1
                }
            }
            // The shutdown pipe stays readable once signaled: left out while draining, or the
            // loop would spin.
            let descriptors = drainDeadline == nil ? [outbox.fileDescriptor, wakeup.fileDescriptor] : [outbox.fileDescriptor]
            waiter = try SocketWaiter(sockets: sockets, fileDescriptors: descriptors)
        }
        let now = clock.now
        // While draining no heartbeat or reconnection is due, only the deadline.
        let timeout = sessions.contains(where: { $0.mayHoldMessages }) ? .zero : max(.zero, (drainDeadline ?? timersDue) - now)
        try waiter?.waitForDescriptors(timeout: timeout)
    }

    /// The earliest moment a session's timer needs the loop.
    private func nextTimer() -> ContinuousClock.Instant {
        var next = clock.now + .seconds(3600)
        for session in sessions {
            if session.socket != nil {
                next = min(next, session.nextHeartbeat)
                if session.inHand == nil { next = min(next, session.brokerExpiry) }
            } else if let reconnectAt = session.reconnectAt {
                next = min(next, reconnectAt)
            }
        }
        return next
    }

    // MARK: Serving

    /// Receives and handles everything the session's socket holds.
    private func receive(on session: PoolSession) throws(ZMQError) {
        while let socket = session.socket, try session.receiveBuffer.receive(from: socket) {
            let kind: WorkerCommand.Kind
            do {
                kind = try WorkerCommand.validatedKind(of: session.receiveBuffer, from: 0)
            } catch {
                logger.log(.warning, "ignored invalid message from the broker", ["endpoint": session.route.endpoint, "reason": error.description])
                continue
            }
            let now = clock.now
            session.brokerExpiry = now + heartbeatExpiry
            switch kind {
            case .request:
                session.acceptedByBroker = true
                guard session.inHand == nil else {
                    logger.log(.warning, "ignored a REQUEST while one is in hand", ["endpoint": session.route.endpoint, "service": session.route.service])
                    continue
                }
                let client = session.receiveBuffer.bytes(WorkerCommand.clientIndex)
                let body = session.receiveBuffer.bytes(from: WorkerCommand.bodyIndex)
                requestsTaken &+= 1
                session.inHand = (requestsTaken, client)
                guard let caller = caller(for: client, on: session) else {
                    try send([Self.unidentifiedCallerRejection.frame], to: client, from: session)
                    continue
                }
                if let reply = session.route.handler(body, caller, DeferredReply(outbox: outbox, session: session.index, request: requestsTaken)) {
                    try send(reply, to: client, from: session)
                }
            case .heartbeat:
                // A broker heartbeats only a worker it registered: the session was accepted.
                session.acceptedByBroker = true
            case .disconnect:
                logger.log(.info, "broker sent DISCONNECT", ["endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index)])
                // A broker refusing READY at once gets a growing back-off, not a reconnection storm.
                lose(session, now: now)
            case .ready, .reply:
                logger.log(.warning, "ignored a command only workers send", ["endpoint": session.route.endpoint, "command": "\(kind)"])
            }
        }
        session.mayHoldMessages = false
    }

    /// The caller of a request with the client address `client`, received on `session`: the
    /// identity the broker appended to it when the pool trusts identities (`nil` when there is
    /// none it can read), else `Caller.unverified`.
    private func caller(for client: [UInt8], on session: PoolSession) -> Caller? {
        guard configuration.trustsCallerIdentities else { return .unverified }
        guard let principal = CallerIdentity.principal(inClientAddress: client) else {
            logger.log(.warning, "refused a request without a caller identity", ["endpoint": session.route.endpoint, "service": session.route.service])
            return nil
        }
        return .authenticated(principal)
    }

    /// The reply to a request whose caller a trusting pool cannot tell.
    private static let unidentifiedCallerRejection = BrokerRejection(
        code: .unauthenticated, text: "the request carries no caller identity this worker can read")

    /// Sends the REPLY of the session's request in hand; while draining, the session then leaves.
    private func send(_ body: [[UInt8]], to client: [UInt8], from session: PoolSession) throws(ZMQError) {
        guard let socket = session.socket else { return }
        session.inHand = nil
        session.mayHoldMessages = true
        if try !WorkerCommand.send(.reply, client: client, body: body, on: socket) {
            logger.log(.warning, "reply dropped: the broker is not reading", ["endpoint": session.route.endpoint, "service": session.route.service])
        }
        // The time the request took is not broker silence, and the reply is a heartbeat.
        let now = clock.now
        session.brokerExpiry = now + heartbeatExpiry
        session.nextHeartbeat = now + configuration.heartbeat.interval
        if drainDeadline != nil { try leave(session) }
    }

    // MARK: Timers and connections

    /// Expires silent brokers, sends heartbeats, and reconnects lost sessions whose back-off
    /// ended, once a timer may be due.
    private func keepTime(now: ContinuousClock.Instant) throws(ZMQError) {
        guard drainDeadline == nil, now >= timersDue else { return }
        defer { timersDue = nextTimer() }
        for session in sessions {
            if let socket = session.socket {
                if session.inHand == nil, now >= session.brokerExpiry {
                    logger.log(.warning, "broker silent; starting over on a new socket", [
                        "endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index),
                    ])
                    lose(session, now: now)
                } else if now >= session.nextHeartbeat {
                    try socket.send(multipart: WorkerCommand.heartbeat.frames, options: .dontWait)
                    session.nextHeartbeat = now + configuration.heartbeat.interval
                    session.mayHoldMessages = true
                }
            } else if let reconnectAt = session.reconnectAt, now >= reconnectAt {
                try connect(session, now: now)
            }
        }
    }

    /// Opens a new socket for the session and says READY.
    private func connect(_ session: PoolSession, now: ContinuousClock.Instant) throws(ZMQError) {
        let socket = try context.socket(.dealer)
        try socket.set(.maxMessageSize, to: configuration.maxFrameSize)
        try socket.secure(configuration.security)
        try socket.connect(session.route.endpoint)
        try socket.send(multipart: WorkerCommand.ready(service: Array(session.route.service.utf8)).frames, options: .dontWait)
        logger.log(.debug, "session ready", ["endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index)])
        session.socket = socket
        session.reconnectAt = nil
        session.acceptedByBroker = false
        session.mayHoldMessages = true
        session.brokerExpiry = now + heartbeatExpiry
        session.nextHeartbeat = now + configuration.heartbeat.interval
        waiter = nil
    }

    /// Drops the session's socket, and any request in hand with it, and schedules a new one
    /// after the back-off.
    private func lose(_ session: PoolSession, now: ContinuousClock.Instant) {
        close(session)
        // A broker that served or heartbeated accepted the session: start the back-off over.
        if session.acceptedByBroker { session.reconnectDelay = configuration.reconnectInitialDelay }
        logger.log(.info, "reconnecting", [
            "endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index),
            "delay_ms": "\(session.reconnectDelay.milliseconds)",
        ])
        session.reconnectAt = now + session.reconnectDelay
        timersDue = min(timersDue, now + session.reconnectDelay)
        session.reconnectDelay = min(session.reconnectDelay * 2, configuration.reconnectMaximumDelay)
    }

    private func close(_ session: PoolSession) {
        session.socket?.close()
        session.socket = nil
        session.inHand = nil
        session.mayHoldMessages = false
        // The last message's frames go with the socket: no receive on it will release them.
        session.receiveBuffer = ReceiveBuffer()
        waiter = nil
    }

    // MARK: Shutting down

    /// Idle sessions leave at once; those with a request in hand leave once they have replied.
    private func beginDrain() throws(ZMQError) {
        drainDeadline = clock.now + configuration.drainTimeout
        waiter = nil
        for session in sessions {
            session.reconnectAt = nil
            if session.socket != nil, session.inHand == nil { try leave(session) }
        }
    }

    /// Says DISCONNECT and lets it, and the last reply, leave within the shutdown linger.
    private func leave(_ session: PoolSession) throws(ZMQError) {
        guard let socket = session.socket else { return }
        try socket.send(multipart: WorkerCommand.disconnect.frames, options: .dontWait)
        try socket.set(.linger, to: Int32(clamping: configuration.shutdownLinger.milliseconds))
        close(session)
    }

    /// Closes the sessions still without their reply, saying nothing: a DISCONNECT would tell
    /// the broker the request in hand was not handled and it would give it to another worker,
    /// though the handler may have applied it. The broker purges such a session after its
    /// `maxRequestDuration`, as it does a crashed worker's.
    private func abandonRequestsInHand() {
        for session in sessions where session.socket != nil {
            logger.log(.error, "no reply within the drain timeout; leaving without it", [
                "endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index),
                "drain_timeout_ms": "\(configuration.drainTimeout.milliseconds)",
            ])
            close(session)
        }
    }
}
