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
    /// What the session serves; a vacant slot keeps its last route until it is taken again.
    @exclusivity(unchecked) var route: WorkerPoolEngine.Route
    /// Whether its service is being removed: it leaves once it has replied, and never reconnects.
    @exclusivity(unchecked) var isLeaving = false
    /// Whether the slot serves nothing (its service was removed) and waits for a service added.
    @exclusivity(unchecked) var isVacant = false
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

    /// Makes a vacant slot a new session of `route`, connecting at the next timer check.
    func occupy(_ route: WorkerPoolEngine.Route, now: ContinuousClock.Instant, reconnectDelay: Duration) {
        self.route = route
        isVacant = false
        isLeaving = false
        acceptedByBroker = false
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
    private let changes: WorkerPoolServices
    /// Every slot: the sessions, and those whose service was removed (vacant, reused first). A
    /// session keeps its index for life, since deferred replies name it.
    @exclusivity(unchecked) private var sessions: [PoolSession] = []
    @exclusivity(unchecked) private var vacant: [Int] = []
    /// The services being removed: when their sessions must have replied, and whom to tell once they left.
    @exclusivity(unchecked) private var removals: [(service: String, deadline: ContinuousClock.Instant, completion: @Sendable () -> Void)] = []
    private let brokerEndpoints: [String]
    private let sessionsPerRoute: Int
    /// Longest time one pass spends handling requests before it sends the deferred replies
    /// posted meanwhile: the same bound as the broker's default `maxBatchDuration`.
    private static let batchDuration = Duration.milliseconds(2)
    /// The session each pass visits first: after a pass cut short, the first one it left out.
    @exclusivity(unchecked) private var passStart = 0
    private let metrics = WorkerMetrics()
    /// Whether `configuration.registrationChanged` was last told that a broker accepts a session.
    @exclusivity(unchecked) private var registered = false
    @exclusivity(unchecked) private var requestsTaken: UInt64 = 0
    /// The waiter over the connected sessions' sockets; rebuilt when one connects or closes.
    @exclusivity(unchecked) private var waiter: SocketWaiter?
    /// Set once shutdown began: when the sessions still in hand must have replied.
    @exclusivity(unchecked) private var drainDeadline: ContinuousClock.Instant?
    /// No timer of any session is due before this, so that the loop looks at the sessions'
    /// timers only when one may be due rather than on every wake-up. Replies and messages only
    /// move timers later; whatever moves one earlier lowers it.
    @exclusivity(unchecked) private var timersDue: ContinuousClock.Instant
    /// The brokers, comma-separated, for the log lines about the whole pool.
    private let endpoints: String

    /// An engine with `sessionsPerRoute` sessions for each of `services` at each of `endpoints`;
    /// it applies the changes `changes` queues as it runs.
    init(
        endpoints: [String], services: [(name: String, handler: WorkerPool.Handler)], sessionsPerRoute: Int,
        configuration: WorkerConfiguration, context: Context, wakeup: Wakeup, outbox: ReplyOutbox, changes: WorkerPoolServices, logger: Logger
    ) {
        self.configuration = configuration
        self.context = context
        self.wakeup = wakeup
        self.outbox = outbox
        self.changes = changes
        self.logger = logger
        brokerEndpoints = endpoints
        self.sessionsPerRoute = sessionsPerRoute
        heartbeatExpiry = configuration.heartbeat.expiry
        timersDue = clock.now
        self.endpoints = endpoints.joined(separator: ",")
        for service in services { add(service.name, handler: service.handler) }
    }

    /// The services with sessions, comma-separated, for the log lines about the whole pool.
    private var services: String {
        var seen: Set<String> = []
        return sessions.filter { !$0.isVacant && seen.insert($0.route.service).inserted }.map(\.route.service).joined(separator: ",")
    }

    func run() throws(ZMQError) {
        defer { completeRemovals() }
        outbox.claim()
        try keepTime(now: clock.now)
        logger.log(.info, "worker ready", ["endpoints": endpoints, "services": services, "sessions": String(sessions.count)])
        while true {
            if wakeup.isSignaled, drainDeadline == nil { try beginDrain() }
            if let drainDeadline {
                if sessions.allSatisfy({ $0.socket == nil }) { break }
                if clock.now >= drainDeadline { abandonRequestsInHand(); break }
            }
            if changes.hasChanges { try apply(changes.take()) }
            if !removals.isEmpty { try finishRemovals() }
            try waitForWork()
            configuration.watchdog?.pet()
            for reply in outbox.hasReplies || waiter?.descriptorIsReadable(0) == true ? outbox.takeAll() : [] {
                let session = sessions[reply.session]
                guard let inHand = session.inHand, inHand.request == reply.request else {
                    logger.log(.debug, "dropped a reply whose request is gone", ["endpoint": session.route.endpoint, "service": session.route.service])
                    continue
                }
                // A pool's requests are never streamed (`DeferredReply.streams` is false): a worker
                // cannot tell its clients' dialects behind a broker.
                guard reply.final else {
                    logger.log(.warning, "dropped a PARTIAL: a worker's replies are not streamed", ["endpoint": session.route.endpoint, "service": session.route.service])
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
            let descriptors = [outbox.fileDescriptor, changes.fileDescriptor] + (drainDeadline == nil ? [wakeup.fileDescriptor] : [])
            waiter = try SocketWaiter(sockets: sockets, fileDescriptors: descriptors)
        }
        let now = clock.now
        // While draining no heartbeat or reconnection is due, only the deadline.
        // The loop's own posts (syncs at a batch's end) write no byte to the outbox's pipe.
        let timeout = outbox.hasReplies || sessions.contains(where: { $0.mayHoldMessages }) ? .zero
            : min(max(.zero, (drainDeadline ?? timersDue) - now), configuration.watchdog?.petInterval ?? .seconds(3600))
        try waiter?.waitForDescriptors(timeout: timeout)
    }

    /// The earliest moment a session's timer needs the loop.
    private func nextTimer() -> ContinuousClock.Instant {
        var next = removals.map(\.deadline).min() ?? clock.now + .seconds(3600)
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
                kind = try WorkerCommand.validatedKind(of: session.receiveBuffer, from: 0, dialect: configuration.dialect)
            } catch {
                logger.log(.warning, "ignored invalid message from the broker", ["endpoint": session.route.endpoint, "reason": error.description])
                continue
            }
            let now = clock.now
            session.brokerExpiry = now + heartbeatExpiry
            switch kind {
            case .request:
                if !session.acceptedByBroker { metrics.accepted(by: session.route.endpoint) }
                session.acceptedByBroker = true
                noteRegistration(true)
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
                if !session.acceptedByBroker { metrics.accepted(by: session.route.endpoint) }
                session.acceptedByBroker = true
                noteRegistration(true)
            case .disconnect:
                logger.log(.info, "broker sent DISCONNECT", ["endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index)])
                // A broker refusing READY at once gets a growing back-off, not a reconnection storm.
                lose(session, now: now)
            case .ready, .partial, .reply:
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
        if try !WorkerCommand.send(.reply, client: client, body: body, on: socket, dialect: configuration.dialect) {
            logger.log(.warning, "reply dropped: the broker is not reading", ["endpoint": session.route.endpoint, "service": session.route.service])
        }
        // The time the request took is not broker silence, and the reply is a heartbeat.
        let now = clock.now
        session.brokerExpiry = now + heartbeatExpiry
        session.nextHeartbeat = now + configuration.heartbeat.interval
        if drainDeadline != nil || session.isLeaving { try leave(session) }
    }

    // MARK: Timers and connections

    /// Expires silent brokers, sends heartbeats, and reconnects lost sessions whose back-off
    /// ended, once a timer may be due.
    private func keepTime(now: ContinuousClock.Instant) throws(ZMQError) {
        guard drainDeadline == nil, now >= timersDue else { return }
        defer {
            timersDue = nextTimer()
            noteRegistration(false)
        }
        for session in sessions {
            if let socket = session.socket {
                if session.inHand == nil, now >= session.brokerExpiry {
                    logger.log(.warning, "broker silent; starting over on a new socket", [
                        "endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index),
                    ])
                    lose(session, now: now)
                } else if now >= session.nextHeartbeat {
                    try socket.send(multipart: WorkerCommand.heartbeat.frames(in: configuration.dialect), options: .dontWait)
                    session.nextHeartbeat = now + configuration.heartbeat.interval
                    session.mayHoldMessages = true
                }
            } else if let reconnectAt = session.reconnectAt, now >= reconnectAt {
                try connect(session, now: now)
            }
        }
    }

    /// Tells `configuration.registrationChanged` when whether some broker accepts a session
    /// changed: `true` at once when one is accepted; `false` is checked on timers, as sessions are lost.
    private func noteRegistration(_ accepted: Bool) {
        guard accepted != registered, let changed = configuration.registrationChanged else { return }
        if !accepted, sessions.contains(where: { $0.socket != nil && $0.acceptedByBroker }) { return }
        registered = accepted
        changed(accepted)
    }

    /// Opens a new socket for the session and says READY.
    private func connect(_ session: PoolSession, now: ContinuousClock.Instant) throws(ZMQError) {
        let socket = try context.socket(.dealer)
        try socket.set(.maxMessageSize, to: configuration.maxFrameSize)
        try socket.secure(configuration.security)
        try socket.connect(session.route.endpoint)
        try socket.send(multipart: WorkerCommand.ready(service: Array(session.route.service.utf8)).frames(in: configuration.dialect), options: .dontWait)
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
        // A session whose service is being removed has left, whatever the reason.
        guard !session.isLeaving else { return }
        // A broker that served or heartbeated accepted the session: start the back-off over.
        if session.acceptedByBroker { session.reconnectDelay = configuration.reconnectInitialDelay }
        logger.log(.info, "reconnecting", [
            "endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index),
            "delay_ms": "\(session.reconnectDelay.milliseconds)",
        ])
        metrics.reconnecting(to: session.route.endpoint, after: session.reconnectDelay)
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
        try socket.send(multipart: WorkerCommand.disconnect.frames(in: configuration.dialect), options: .dontWait)
        try socket.set(.linger, to: Int32(clamping: configuration.shutdownLinger.milliseconds))
        close(session)
    }

    private func abandonRequestsInHand() {
        for session in sessions where session.socket != nil { abandonRequest(of: session) }
    }

    /// Closes a session still without the reply it owes, past the drain timeout, saying
    /// nothing: a DISCONNECT would tell the broker the request in hand was not handled and it
    /// would give it to another worker, though the handler may have applied it. The broker
    /// purges such a session after its `maxRequestDuration`, as it does a crashed worker's.
    private func abandonRequest(of session: PoolSession) {
        logger.log(.error, "no reply within the drain timeout; leaving without it", [
            "endpoint": session.route.endpoint, "service": session.route.service, "session": String(session.index),
            "drain_timeout_ms": "\(configuration.drainTimeout.milliseconds)",
        ])
        close(session)
    }

    // MARK: Adding and removing services

    /// Applies the additions and removals other threads queued, in their order.
    private func apply(_ queued: [WorkerPoolServices.Change]) throws(ZMQError) {
        for change in queued {
            switch change {
            case .add(let service, let handler):
                add(service, handler: handler)
                logger.log(.info, "service added", ["endpoints": endpoints, "service": service])
            case .remove(let service, let completion):
                try beginRemoval(of: service, completion: completion)
            }
        }
    }

    /// Makes the sessions of `service` at every broker, in vacant slots first; they connect at
    /// the next timer check (while draining, never).
    private func add(_ service: String, handler: @escaping WorkerPool.Handler) {
        let now = clock.now
        for endpoint in brokerEndpoints {
            let route = Route(endpoint: endpoint, service: service, handler: handler)
            for _ in 0..<sessionsPerRoute {
                if let slot = vacant.popLast() {
                    sessions[slot].occupy(route, now: now, reconnectDelay: configuration.reconnectInitialDelay)
                } else {
                    sessions.append(PoolSession(index: sessions.count, route: route, now: now, reconnectDelay: configuration.reconnectInitialDelay))
                }
            }
        }
        timersDue = now
    }

    /// Starts removing `service`: its idle sessions leave at once, those with a request in hand
    /// once they have replied, within the drain timeout. A REQUEST already waiting in an idle
    /// session's socket is served first: the broker counts it as that worker's, and would only
    /// requeue it at the DISCONNECT, a detour for its client.
    private func beginRemoval(of service: String, completion: @escaping @Sendable () -> Void) throws(ZMQError) {
        let deadline = clock.now + configuration.drainTimeout
        for session in sessions where !session.isVacant && session.route.service == service {
            session.isLeaving = true
            session.reconnectAt = nil
            if session.socket != nil, session.inHand == nil { try receive(on: session) }
            if session.socket != nil, session.inHand == nil { try leave(session) }
        }
        removals.append((service, deadline, completion))
        timersDue = min(timersDue, deadline)
        logger.log(.info, "removing service", ["endpoints": endpoints, "service": service])
    }

    /// Completes the removals whose sessions have all left, making their slots vacant, and
    /// makes those past their deadline leave without the replies they owe.
    private func finishRemovals() throws(ZMQError) {
        let now = clock.now
        var waiting: [(service: String, deadline: ContinuousClock.Instant, completion: @Sendable () -> Void)] = []
        for removal in removals {
            let leaving = sessions.filter { $0.isLeaving && !$0.isVacant && $0.route.service == removal.service }
            if leaving.contains(where: { $0.socket != nil }) {
                guard now >= removal.deadline else {
                    waiting.append(removal)
                    continue
                }
                for session in leaving where session.socket != nil { abandonRequest(of: session) }
            }
            for session in leaving {
                session.isVacant = true
                vacant.append(session.index)
            }
            changes.removed(removal.service)
            logger.log(.info, "service removed", ["endpoints": endpoints, "service": removal.service])
            removal.completion()
        }
        removals = waiting
    }

    /// Completes the removals still running when the loop ends: every session has left.
    private func completeRemovals() {
        for removal in removals {
            changes.removed(removal.service)
            removal.completion()
        }
        removals = []
    }
}
