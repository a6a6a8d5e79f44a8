import Access
import LyceumLifecycle
import LyceumLogging
import ZeroMQ

/// A registered worker, as the broker sees it.
///
/// Like every routing record, used only on the broker's thread and changed for every message:
/// its mutable properties opt out of the runtime's exclusivity checks, which guard nothing here
/// and cost a call each (together about 7% of the broker's instructions).
final class WorkerRecord {
    let identity: [UInt8]
    let service: ServiceRecord
    /// The dialect the worker registered in, which every command to and from it speaks.
    let dialect: MDPDialect
    /// When the worker is purged unless heard from: a heartbeat expiry while it waits, the
    /// longest request duration while it has a request, so that a slow request never
    /// expires its worker.
    @exclusivity(unchecked) var expiry: ContinuousClock.Instant
    /// The request the worker has in hand, its body frames copies of those sent, kept until the
    /// reply so that a DISCONNECT instead gives the request back to its queue; `nil` while it waits.
    @exclusivity(unchecked) var request: QueuedRequest?
    /// The address the worker was given for the request's client instead of its routing id,
    /// and must return with the reply (see ``WorkerAddresses``).
    @exclusivity(unchecked) var clientAddress: [UInt8] = []
    /// How far its reply to the request in hand has gone, and the PARTIALs held for a 7/MDP
    /// client, which takes one reply (protocol/majordomo.md, "Three dialects").
    @exclusivity(unchecked) var heldParts = HeldParts()

    init(identity: [UInt8], service: ServiceRecord, dialect: MDPDialect, expiry: ContinuousClock.Instant) {
        self.identity = identity
        self.service = service
        self.dialect = dialect
        self.expiry = expiry
    }
}

/// Where a client's replies go, and how they are framed.
struct ClientAddress {
    /// The client's routing id.
    let routingID: [UInt8]
    /// The routing frames the client put before its empty frame, returned with the reply.
    let envelope: [[UInt8]]
    /// The client's dialect, which its replies speak.
    let dialect: MDPDialect
}

/// A client's request, waiting for a worker or in a worker's hands.
struct QueuedRequest {
    let client: ClientAddress
    /// The caller's identity to append to the worker's client address; empty without a key directory.
    let identity: [UInt8]
    /// The frames as received (or copies, for a request given back by a worker), forwarded to
    /// the worker without a copy.
    let body: [Message]
    /// When the broker took the request; a request given back by a worker keeps it, so that
    /// its wait for a worker (``BrokerConfiguration/unknownServiceTimeout``) counts from then.
    let enqueued: ContinuousClock.Instant
    /// The service the client addressed when the request was routed to another; `nil` otherwise.
    let requestedService: [UInt8]?
}

/// A service's queue of requests and its waiting workers, least recently used first.
final class ServiceRecord {
    let name: [UInt8]
    @exclusivity(unchecked) var requests = FIFO<QueuedRequest>()
    @exclusivity(unchecked) var waiting = FIFO<WorkerRecord>()
    @exclusivity(unchecked) var workerCount = 0

    init(name: [UInt8]) { self.name = name }

    var isUnused: Bool { workerCount == 0 && requests.isEmpty }
}

/// A local service's request waiting for its deferred reply.
struct LocalRequest {
    let client: ClientAddress
    let service: LocalServiceRecord
}

/// A local service and how many of its requests wait for their deferred replies: kept with the
/// service, so that counting them costs no lookup by name per request.
final class LocalServiceRecord {
    let service: LocalService
    /// The service's name as clients address it.
    let name: [UInt8]
    var inHand = 0

    init(_ service: LocalService) {
        self.service = service
        name = Array(service.name.utf8)
    }
}

/// The broker's routing state and loop, confined to the thread running ``Broker/run()``.
///
/// The state read or changed for every message opts out of the runtime's exclusivity checks
/// (`@exclusivity(unchecked)`), as ``WorkerRecord`` explains: one thread, no overlapping access.
final class BrokerEngine {
    private let router: Socket
    private let configuration: BrokerConfiguration
    private let localServices: [[UInt8]: LocalServiceRecord]
    /// The routed services by the name clients address, with their targets' names as bytes.
    private let routes: [[UInt8]: (choose: @Sendable (UnsafeRawBufferPointer) -> Int?, targets: [[UInt8]])]
    /// The `service_unknown` text of each routed service's targets.
    private let absenceTexts: [[UInt8]: String]
    /// `configuration.keyDirectory`, read once: it is asked on every message.
    private let keyDirectory: (any KeyDirectory)?
    private let outbox: ReplyOutbox
    /// Local requests answered later, by the number their ``DeferredReply`` carries.
    private var localInHand: [UInt64: LocalRequest] = [:]
    private var localRequestsTaken: UInt64 = 0
    private let logger: Logger
    private let clock = ContinuousClock()
    /// `configuration.heartbeat.expiry`, computed once: the product is costly for a per-message value.
    private let heartbeatExpiry: Duration
    @exclusivity(unchecked) private var workers: [[UInt8]: WorkerRecord] = [:]
    @exclusivity(unchecked) private var services: [[UInt8]: ServiceRecord] = [:]
    @exclusivity(unchecked) private var queuedRequests = 0
    @exclusivity(unchecked) private var receiveBuffer = ReceiveBuffer()
    @exclusivity(unchecked) private var workerAddresses = WorkerAddresses()
    /// The time of the current batch of messages: read once per wake-up rather than once per
    /// message, which is precise enough for expiries of milliseconds and more.
    @exclusivity(unchecked) private var now: ContinuousClock.Instant
    /// Hands the latest snapshot to the ``Broker``, which any thread may read.
    private let publish: (BrokerSnapshot) -> Void
    private let metrics = BrokerMetrics()
    /// Set when a worker registers or goes (and at first, for the local services), so that the
    /// published worker counts follow at once; queue depths are published on every housekeeping pass.
    @exclusivity(unchecked) private var workersChanged = true
    /// The byte budgets and the count limit of the router's connections.
    private let connectionGuard: ConnectionGuard
    /// `router.wireBytesReceived` after the last message taken, so that each message's size on
    /// the wire is the difference.
    @exclusivity(unchecked) private var wireBytesTaken: UInt64 = 0

    /// How long the router stays open after the last deferred reply of a shutdown.
    private static let lastRepliesGrace = Duration.milliseconds(100)
    /// How long a stopping broker waits for the replies to the requests its workers have in hand
    /// (at most `maxRequestDuration`): within a process's 10 s grace period.
    static let stopDrainLimit = Duration.seconds(5)
    /// Why a stopping broker refuses a request: `service_unknown`, which Lyceum's clients retry at
    /// once through their next broker (protocol/majordomo.md, *A broker that stops*).
    private static let stopping = BrokerRejection(code: .serviceUnknown, text: "the broker is stopping: retry through another broker")
    /// Set once ``route(until:)`` was told to stop: requests are refused, replies still routed.
    @exclusivity(unchecked) private var isStopping = false

    /// Messages handled between two looks at the timers, so that a flood cannot starve heartbeats.
    private static let batch = 4096

    init(router: Socket, configuration: BrokerConfiguration, outbox: ReplyOutbox, logger: Logger, publish: @escaping (BrokerSnapshot) -> Void) throws(ZMQError) {
        self.router = router
        self.outbox = outbox
        localServices = Dictionary(uniqueKeysWithValues: configuration.localServices.map { (Array($0.name.utf8), LocalServiceRecord($0)) })
        routes = Dictionary(configuration.routedServices.map { (Array($0.name.utf8), ($0.choose, $0.targets.map { Array($0.name.utf8) })) },
                            uniquingKeysWith: { _, last in last })
        absenceTexts = Dictionary(configuration.routedServices.flatMap(\.targets).map { (Array($0.name.utf8), $0.absenceText) },
                                  uniquingKeysWith: { _, last in last })
        self.publish = publish
        self.configuration = configuration
        keyDirectory = configuration.keyDirectory
        heartbeatExpiry = configuration.heartbeat.expiry
        self.logger = logger
        now = clock.now
        connectionGuard = try ConnectionGuard(socket: router, limits: ConnectionGuard.Limits(
            maxConnections: configuration.maxConnections, maxInputBytes: configuration.maxInputBytesPerConnection,
            maxOutputBytes: configuration.maxOutputBytesPerConnection), logger: logger, now: now)
    }

    func route(until wakeup: Wakeup) throws(ZMQError) {
        var waiter = try SocketWaiter(sockets: [router], fileDescriptors: [wakeup.fileDescriptor, outbox.fileDescriptor])
        outbox.claim()
        // Whether the router may hold messages its descriptor will not announce: true unless
        // its last use was a receive that found nothing.
        var mayHoldMessages = true
        let housekeeping = max(min(configuration.heartbeat.interval, configuration.unknownServiceTimeout) / 2, .milliseconds(1))
        var nextHeartbeat = clock.now + configuration.heartbeat.interval
        var nextHousekeeping = clock.now + housekeeping
        // The outbox's place among the waiter's descriptors (the shutdown pipe's goes once stopping).
        var outboxIndex = 1
        var stopBy: ContinuousClock.Instant?
        while true {
            if stopBy == nil, wakeup.isSignaled {
                stopBy = clock.now + min(Self.stopDrainLimit, configuration.maxRequestDuration)
                try beginStopping()
                // The shutdown pipe stays readable: wait on the router and the outbox alone.
                waiter = try SocketWaiter(sockets: [router], fileDescriptors: [outbox.fileDescriptor])
                outboxIndex = 0
            }
            if let stopBy, try finishedStopping(by: stopBy) { break }
            let deadline = min(nextHeartbeat, nextHousekeeping, connectionGuard.nextCheck, stopBy ?? nextHeartbeat)
            // The loop's own posts (syncs at a batch's end) write no byte to the outbox's pipe.
            try waiter.wait(timeout: outbox.hasReplies ? .zero : max(.zero, deadline - clock.now), checkingFirst: mayHoldMessages)
            now = clock.now
            configuration.watchdog?.pet(now: now)
            // Everything that arrived is handled in one go, so that a wake-up serves many messages
            // and local services that hand work to other threads wake them once for all; but
            // only for `maxBatchDuration`, because the deferred replies (a write's
            // acknowledgement) and the journals' wake-ups wait for the batch's end, and costly
            // requests could otherwise hold them for seconds.
            var handled = 0
            let batchEnd = now + configuration.maxBatchDuration
            var withinTime = true
            try BatchedSignals.run { () throws(ZMQError) in
                while handled < Self.batch, withinTime, try receiveBuffer.receive(from: router) {
                    try noteTaken()
                    try handleReceived()
                    handled += 1
                    withinTime = clock.now < batchEnd
                }
            }
            mayHoldMessages = handled == Self.batch || !withinTime
            // Checked on every pass, not only when the poll saw the pipe: while clients keep the
            // router busy the loop may not poll at all.
            if outbox.hasReplies || waiter.descriptorIsReadable(outboxIndex) {
                try sendLocalReplies()
                mayHoldMessages = true
            }
            now = clock.now
            try connectionGuard.poll(now: now)
            if now >= nextHousekeeping {
                try purgeExpiredWorkers(now: now)
                try rejectRequestsForAbsentServices(now: now)
                nextHousekeeping = now + housekeeping
                mayHoldMessages = true
                workersChanged = true
            }
            if workersChanged {
                let current = snapshot()
                publish(current)
                metrics.report(current)
                workersChanged = false
            }
            if now >= nextHeartbeat {
                try sendHeartbeats()
                nextHeartbeat = now + configuration.heartbeat.interval
                mayHoldMessages = true
            }
        }
        try drainLocalRequests()
        try disconnectAllWorkers()
    }

    // MARK: Stopping

    /// Stops taking requests (protocol/majordomo.md, *A broker that stops*): every queued one is
    /// answered `service_unknown` now, as every new one will be, so that clients retry through
    /// another broker at once; the requests the workers have in hand are still answered.
    private func beginStopping() throws(ZMQError) {
        isStopping = true
        let inHand = workers.values.reduce(0) { $0 + ($1.request == nil ? 0 : 1) }
        logger.log(.info, "broker stopping: refusing new requests, answering those in hand", [
            "in_hand": String(inHand), "queued": String(queuedRequests),
        ])
        try refuseQueued()
    }

    /// Answers every queued request `service_unknown` (a request given back by a worker leaving
    /// while the broker stops lands in a queue too).
    private func refuseQueued() throws(ZMQError) {
        guard queuedRequests > 0 else { return }
        for service in services.values {
            while let request = service.requests.popFirst() {
                queuedRequests -= 1
                try reject(request.client, service: request.requestedService ?? service.name, Self.stopping)
            }
        }
    }

    /// Whether a stopping broker may close: no worker has a request in hand, or `deadline`
    /// passed. Then the last replies get a moment to be read.
    private func finishedStopping(by deadline: ContinuousClock.Instant) throws(ZMQError) -> Bool {
        try refuseQueued()
        let inHand = workers.values.reduce(0) { $0 + ($1.request == nil ? 0 : 1) }
        guard inHand == 0 || clock.now >= deadline else { return false }
        if inHand > 0 { logger.log(.error, "requests left without a reply at shutdown", ["requests": String(inHand)]) }
        // A client with ZMQ_IMMEDIATE (as Lyceum's are) drops the replies it has not read yet
        // when its connection ends.
        var waiter = try SocketWaiter(sockets: [], fileDescriptors: [outbox.fileDescriptor])
        try waiter.waitForDescriptors(timeout: Self.lastRepliesGrace)
        return true
    }

    // MARK: Dispatching messages

    /// Handles the message in the receive buffer, reading it in place; frame 0 is the sender's routing id.
    private func handleReceived() throws(ZMQError) {
        let count = receiveBuffer.endIndex
        let sender = receiveBuffer.bytes(0)
        guard count >= 3, count <= configuration.maxFramesPerMessage else {
            return drop(from: sender, "message has \(count) frames")
        }
        guard let (peer, dialect, start) = MDPDialect.classify(receiveBuffer) else {
            return drop(from: sender, "no MDPC01, MDPC02, MDPW01 or MDPW02 header where a dialect has it")
        }
        switch peer {
        case .worker:
            let kind: WorkerCommand.Kind
            do {
                kind = try WorkerCommand.validatedKind(of: receiveBuffer, from: start, dialect: dialect)
            } catch {
                logger.log(.warning, "invalid worker command; disconnecting", [
                    "peer": PeerText.excerpt(sender), "dialect": dialect.rawValue, "reason": error.description,
                ])
                return try disconnect(sender, dialect)
            }
            let caller = callerOfReceived()
            guard caller?.may(.registerWorker) == true else {
                // A registered worker whose key was revoked still returns the request in hand.
                if kind == .reply, let worker = workers[sender], worker.dialect == dialect { _ = try handleReply(from: worker, start: start) }
                let key = if case .authenticated(let principal)? = caller { PeerText.excerpt(principal.name) } else { "unknown" }
                logger.log(.warning, "worker command from a key without the worker role; disconnecting", [
                    "peer": PeerText.excerpt(sender), "key": key, "command": "\(kind)",
                ])
                return try disconnect(sender, dialect)
            }
            try handleWorker(sender, kind, dialect: dialect, start: start)
        case .client:
            do { try ClientMessage.validate(receiveBuffer, from: start, dialect: dialect) } catch {
                return drop(from: sender, "\(dialect.rawValue): \(error.description)")
            }
            // RFC 18's requests have no empty frame, so no envelope either.
            let envelope = dialect.hasEmptyFrame ? (1..<start).map { receiveBuffer.bytes($0) } : []
            try handleClient(sender, envelope: envelope, dialect: dialect, start: start, caller: callerOfReceived())
        }
    }

    /// The sender of the message in the receive buffer: `Caller.unverified` without a key
    /// directory, else the principal of the key its connection authenticated with (the ZAP
    /// handler's `User-Id`), asked for anew on each message so that a revoked key is refused from
    /// its next message on; `nil` when the directory does not (or no longer) know the key.
    private func callerOfReceived() -> Caller? {
        guard let keyDirectory else { return .unverified }
        // Frame 0 is the routing id the ROUTER made, which carries no connection properties.
        guard let userID = receiveBuffer.property("User-Id", ofFrame: 1), let principal = keyDirectory.principal(forKey: userID) else {
            return nil
        }
        return .authenticated(principal)
    }

    /// Tells the connection guard the wire size of the message in the receive buffer, routing
    /// id aside (the router adds it; it never crossed the wire).
    private func noteTaken() throws(ZMQError) {
        let received = router.wireBytesReceived
        defer { wireBytesTaken = received }
        guard let descriptor = receiveBuffer.sourceDescriptor else { return }
        let routingIDSize = receiveBuffer.withFrameBytes(0) { $0.count }
        try connectionGuard.took(from: receiveBuffer.bytes(0), descriptor: descriptor,
                             wireBytes: received &- wireBytesTaken &- router.wireSize(ofFrame: routingIDSize))
    }

    private func drop(from sender: [UInt8], _ reason: String) {
        logger.log(.warning, "dropped malformed message", ["peer": PeerText.excerpt(sender), "reason": reason])
    }

    /// Handles a valid client request in `dialect` in the receive buffer, which starts at
    /// `start` (its empty frame, or where it would be in RFC 18's dialect), from `caller`
    /// (`nil`: a key the directory does not know).
    private func handleClient(_ sender: [UInt8], envelope: [[UInt8]], dialect: MDPDialect, start: Int, caller: Caller?) throws(ZMQError) {
        // `name` is the service the client addressed, which every reply and rejection carries.
        let name = receiveBuffer.bytes(start + dialect.serviceIndex)
        let bodyStart = start + dialect.bodyIndex
        let client = ClientAddress(routingID: sender, envelope: envelope, dialect: dialect)
        if let problem = MDP.serviceNameProblem(name) {
            // The reply's service frame is an excerpt too: echoing a megabyte of name would cost
            // the broker a megabyte of reply.
            return try reject(client, service: Array(PeerText.excerpt(name).utf8), BrokerRejection(
                code: .badRequest, text: "the service name \(problem)"), naming: name)
        }
        guard let caller else {
            return try reject(client, service: name, BrokerRejection(
                code: .unauthenticated, text: "the key this connection authenticated with is no longer authorised"))
        }
        let permission = configuration.servicePermissions.permission(toCall: name)
        guard caller.may(permission) else {
            return try reject(client, service: name, BrokerRejection(
                code: .forbidden, text: "the key's role may not call \(permission == .callServices ? "these" : "management") services"))
        }
        if name.starts(with: MDP.managementPrefix) {
            let message = ClientMessage(service: name, body: receiveBuffer.bytes(from: bodyStart))
            return try reply(to: client, service: name, body: [managementAnswer(message)])
        }
        if isStopping { return try reject(client, service: name, Self.stopping) }
        // Routed requests go to their target's workers; the rest on as addressed.
        var target: [UInt8]?
        if !routes.isEmpty, let route = routes[name], let index = receiveBuffer.withFrameBytes(bodyStart, route.choose),
           route.targets.indices.contains(index) {
            target = route.targets[index]
        }
        if target == nil, let local = localServices[name] {
            return try handleLocally(local, client: client, caller: caller,
                                     ClientMessage(service: name, body: receiveBuffer.bytes(from: bodyStart)))
        }
        let identity: [UInt8] = if case .authenticated(let principal) = caller { CallerIdentity.encode(principal) } else { [] }
        let queueName = target ?? name
        let service = services[queueName] ?? ServiceRecord(name: queueName)
        if service.requests.count >= configuration.maxQueuedRequestsPerService {
            return try reject(client, service: name, BrokerRejection(
                code: .queueFull, text: "the service's queue holds \(service.requests.count) requests, its limit"))
        }
        if queuedRequests >= configuration.maxQueuedRequests {
            return try reject(client, service: name, BrokerRejection(
                code: .overloaded, text: "the broker holds \(queuedRequests) queued requests, its limit"))
        }
        // With nobody queued before it, a waiting worker takes the request straight from the
        // receive buffer: the common case costs no copy of the body.
        let requestedService = target == nil ? nil : name
        if service.requests.isEmpty, try assign(
            client: client, identity: identity, requestedService: requestedService, enqueued: now,
            body: receiveBuffer.messages(from: bodyStart), to: service) {
            return
        }
        // Registered only once a request is accepted, so that rejected ones leave nothing behind;
        // and again if the attempt above purged the service's last worker along with the service.
        services[queueName] = service
        service.requests.append(QueuedRequest(
            client: client, identity: identity, body: receiveBuffer.takeMessages(from: bodyStart), enqueued: now,
            requestedService: requestedService))
        queuedRequests += 1
        try dispatch(service)
    }

    /// 8/MMI: `mmi.service` says whether a worker serves the service named in the body (for a
    /// routed service: every one of its targets); the configured management services answer
    /// from a snapshot.
    private func managementAnswer(_ message: ClientMessage) -> [UInt8] {
        if let answer = configuration.managementServices[String(decoding: message.service, as: UTF8.self)] {
            return answer(snapshot(), message.body)
        }
        guard message.service == MDP.serviceQuery else { return MDP.notImplemented }
        let hasWorkers = { (name: [UInt8]) in self.services[name].map { $0.workerCount > 0 } ?? false }
        let registered = if let route = routes[message.body[0]] {
            route.targets.allSatisfy(hasWorkers)
        } else {
            localServices[message.body[0]] != nil || hasWorkers(message.body[0])
        }
        return registered ? MDP.found : MDP.notFound
    }

    /// Handles a valid worker command of kind `kind` in `dialect` in the receive buffer, which
    /// starts at `start` (its empty frame, or where it would be in RFC 18's dialect).
    private func handleWorker(_ sender: [UInt8], _ kind: WorkerCommand.Kind, dialect: MDPDialect, start: Int) throws(ZMQError) {
        let worker = workers[sender]
        if let worker, worker.dialect != dialect {
            return try refuse(sender, "\(kind.name) in \(dialect.rawValue) from a worker registered in \(worker.dialect.rawValue)", worker.dialect)
        }
        let refuse = { (reason: String) throws(ZMQError) in try self.refuse(sender, reason, dialect) }
        switch kind {
        case .ready:
            let name = receiveBuffer.bytes(start + WorkerCommand.serviceIndex)
            if worker != nil { return try refuse("READY from a registered worker") }
            if let problem = MDP.serviceNameProblem(name) { return try refuse("READY for a service name that \(problem)") }
            if name.starts(with: MDP.managementPrefix) { return try refuse("READY for a management service") }
            if localServices[name] != nil { return try refuse("READY for a service the broker answers itself") }
            if workers.count >= configuration.maxWorkers { return try refuse("the broker has \(workers.count) workers, its limit") }
            let service = services[name] ?? ServiceRecord(name: name)
            services[name] = service
            let record = WorkerRecord(identity: sender, service: service, dialect: dialect, expiry: now + heartbeatExpiry)
            workers[sender] = record
            service.workerCount += 1
            workersChanged = true
            service.waiting.append(record)
            logger.log(.info, "worker registered", ["worker": PeerText.excerpt(sender), "service": PeerText.excerpt(name), "dialect": dialect.rawValue])
            try dispatch(service)
        case .partial:
            guard let worker, try handlePartial(from: worker, start: start) else { return try refuse("PARTIAL without a matching request") }
            worker.expiry = max(worker.expiry, now + configuration.maxRequestDuration)
        case .reply:
            guard let worker, try handleReply(from: worker, start: start) else { return try refuse("REPLY without a matching request") }
            worker.expiry = now + heartbeatExpiry
            worker.service.waiting.append(worker)
            try dispatch(worker.service)
        case .heartbeat:
            guard let worker else { return try refuse("HEARTBEAT from an unregistered worker") }
            worker.expiry = max(worker.expiry, now + heartbeatExpiry)
        case .disconnect:
            guard let worker else { return }
            logger.log(.info, "worker disconnected", ["worker": PeerText.excerpt(sender), "service": PeerText.excerpt(worker.service.name)])
            let service = worker.service
            // A request in hand crossed the DISCONNECT on the wire: a worker says DISCONNECT only
            // without handling it (protocol/majordomo.md), so it goes first to another worker,
            // unlike that of a worker gone silent, which may have applied it. Queued before the
            // worker goes, so that the service outlives it.
            if let request = worker.request, worker.heldParts.progress != .none {
                // Part of the reply is out: the request was handled, and is not served twice.
                worker.request = nil
                try reject(request.client, service: request.requestedService ?? service.name, BrokerRejection(
                    code: .serviceUnknown, text: "the worker left in the middle of its reply"))
            } else if let request = worker.request {
                worker.request = nil
                service.requests.prepend(request)
                queuedRequests += 1
                logger.log(.info, "request given back by a disconnecting worker; requeued", [
                    "worker": PeerText.excerpt(sender), "service": PeerText.excerpt(service.name), "client": PeerText.excerpt(request.client.routingID),
                ])
            }
            remove(worker)
            try dispatch(service)
        case .request:
            try refuse("REQUEST from a worker")
        }
    }

    /// Sends the REPLY in the receive buffer to the client whose request `worker` has in hand,
    /// and frees the worker of it.
    /// - Returns: `false`, sending nothing, when the worker has no request in hand or the reply
    ///   names another client address.
    private func handleReply(from worker: WorkerRecord, start: Int) throws(ZMQError) -> Bool {
        guard let request = worker.request, receiveBuffer.frame(start + WorkerCommand.clientIndex, equals: worker.clientAddress) else { return false }
        // Releases the copies of the request's body.
        worker.request = nil
        let progress = worker.heldParts.progress
        let held = worker.heldParts.takeAll()
        // The client was answered when its held parts went past their bound.
        guard progress != .abandoned else { return true }
        let service = request.requestedService ?? worker.service.name
        if held.isEmpty {
            try reply(to: request.client, service: service, body: receiveBuffer.messages(from: start + WorkerCommand.bodyIndex))
        } else {
            try reply(to: request.client, service: service, body: held + receiveBuffer.takeMessages(from: start + WorkerCommand.bodyIndex))
        }
        return true
    }

    /// Passes the PARTIAL in the receive buffer to the client whose request `worker` has in
    /// hand: as a PARTIAL to an 18/MDP client; held for a 7/MDP client, whose one reply it will
    /// lead, within ``HeldParts``' bounds (past them the client is answered `overloaded` and
    /// the worker's later parts are dropped).
    /// - Returns: `false`, sending nothing, when the worker has no request in hand or the
    ///   PARTIAL names another client address.
    private func handlePartial(from worker: WorkerRecord, start: Int) throws(ZMQError) -> Bool {
        guard let request = worker.request, receiveBuffer.frame(start + WorkerCommand.clientIndex, equals: worker.clientAddress) else { return false }
        let service = request.requestedService ?? worker.service.name
        let bodyStart = start + WorkerCommand.bodyIndex
        if worker.heldParts.progress == .abandoned { return true }
        if request.client.dialect.streamsReplies {
            worker.heldParts.progress = .partsOut
            try reply(to: request.client, service: service, body: receiveBuffer.messages(from: bodyStart), final: false)
            return true
        }
        let size = (bodyStart..<receiveBuffer.endIndex).reduce(0) { total, index in total + receiveBuffer.withFrameBytes(index) { $0.count } }
        if !worker.heldParts.hold(receiveBuffer.takeMessages(from: bodyStart), size: size,
                                  maxFrames: configuration.maxFramesPerMessage, maxBytes: configuration.maxOutputBytesPerConnection) {
            // The client gets its answer now; the worker's FINAL will find nothing to send.
            try reject(request.client, service: service, BrokerRejection(
                code: .overloaded, text: "the reply's parts exceed what the broker holds for a 7/MDP client"))
        }
        return true
    }

    /// Sends the service's oldest requests to its least recently used waiting workers.
    private func dispatch(_ service: ServiceRecord) throws(ZMQError) {
        while let request = service.requests.first,
              try assign(client: request.client, identity: request.identity,
                         requestedService: request.requestedService, enqueued: request.enqueued, body: request.body, to: service) {
            _ = service.requests.popFirst()
            queuedRequests -= 1
            receiveBuffer.recycle(request.body)
        }
    }

    /// Sends a request to the service's least recently used waiting worker that is reachable,
    /// purging those that are not. The worker's client address is a fresh one followed by
    /// `identity`, the caller's encoded ``CallerIdentity`` (empty without a key directory); the
    /// reply will carry `requestedService` when given (a routed request), else the service's name.
    /// The worker keeps copies of the body (`zmq_msg_copy`: a reference for a large frame) until
    /// its reply, to requeue the request should it say DISCONNECT instead.
    /// - Returns: `false` when no waiting worker is left; the body is then as it was.
    private func assign(
        client: ClientAddress, identity: [UInt8], requestedService: [UInt8]?, enqueued: ContinuousClock.Instant,
        body: some Collection<Message>, to service: ServiceRecord
    ) throws(ZMQError) -> Bool {
        guard !service.waiting.isEmpty else { return false }
        // Made before sending empties the frames.
        let kept = body.map(Message.init(copying:))
        while let worker = service.waiting.popFirst() {
            var address = workerAddresses.next()
            // Skipped when empty (no key directory): even an empty append reallocates the address.
            if !identity.isEmpty { address.append(contentsOf: identity) }
            let sent = try send(to: worker.identity) { router throws(ZMQError) in
                try WorkerCommand.send(.request, client: address, body: body, on: router, dialect: worker.dialect)
            }
            if sent {
                worker.request = QueuedRequest(client: client, identity: identity, body: kept, enqueued: enqueued,
                                               requestedService: requestedService)
                worker.clientAddress = address
                worker.expiry = max(worker.expiry, now + configuration.maxRequestDuration)
                return true
            }
            logger.log(.warning, "worker unreachable; purged", ["worker": PeerText.excerpt(worker.identity)])
            remove(worker)
        }
        return false
    }

    private func snapshot() -> BrokerSnapshot {
        let remote = services.values.map { service in
            BrokerSnapshot.Service(
                name: String(decoding: service.name, as: UTF8.self), workers: service.workerCount,
                idleWorkers: service.waiting.count, queuedRequests: service.requests.count)
        }
        let local = localServices.values.map { record in
            BrokerSnapshot.Service(
                name: record.service.name, workers: 0, idleWorkers: 0, queuedRequests: record.inHand, isLocal: true)
        }
        let list = remote + local
        return BrokerSnapshot(services: list.sorted { $0.name < $1.name }, connections: connectionGuard.counts)
    }

    // MARK: Local services

    /// Answers a local service's request at once, or records it until its deferred reply comes.
    private func handleLocally(_ local: LocalServiceRecord, client: ClientAddress, caller: Caller, _ message: ClientMessage) throws(ZMQError) {
        let waiting = local.inHand
        if waiting >= configuration.maxQueuedRequestsPerService {
            return try reject(client, service: message.service, BrokerRejection(
                code: .queueFull, text: "the service holds \(waiting) requests waiting for their replies, its limit"))
        }
        localRequestsTaken &+= 1
        let later = DeferredReply(outbox: outbox, session: 0, request: localRequestsTaken, streams: client.dialect.streamsReplies)
        if let body = local.service.handler(message.body, caller, later) {
            return try reply(to: client, service: message.service, body: body)
        }
        localInHand[localRequestsTaken] = LocalRequest(client: client, service: local)
        local.inHand = waiting + 1
    }

    /// Sends the deferred replies posted since the last pass.
    private func sendLocalReplies() throws(ZMQError) {
        for posted in outbox.takeAll() {
            // A PARTIAL leaves the request waiting for its FINAL.
            guard let request = posted.final ? localInHand.removeValue(forKey: posted.request) : localInHand[posted.request] else {
                logger.log(.warning, "dropped a reply to a local request already answered", [:])
                continue
            }
            if posted.final {
                request.service.inHand -= 1
            } else if !request.client.dialect.streamsReplies {
                logger.log(.warning, "dropped a PARTIAL for a 7/MDP client", ["service": PeerText.excerpt(request.service.name)])
                continue
            }
            try reply(to: request.client, service: request.service.name, body: posted.body, final: posted.final)
        }
    }

    /// On shutdown, sends the replies of local requests still waiting, for up to `maxRequestDuration`.
    private func drainLocalRequests() throws(ZMQError) {
        // The shutdown pipe stays readable: wait on the outbox alone.
        var waiter = try SocketWaiter(sockets: [], fileDescriptors: [outbox.fileDescriptor])
        let deadline = clock.now + configuration.maxRequestDuration
        let waited = !localInHand.isEmpty
        while !localInHand.isEmpty, clock.now < deadline {
            try sendLocalReplies()
            if !localInHand.isEmpty { try waiter.waitForDescriptors(timeout: min(deadline - clock.now, .milliseconds(100))) }
        }
        if !localInHand.isEmpty {
            logger.log(.error, "local requests left without a reply at shutdown", ["requests": String(localInHand.count)])
        } else if waited {
            // A client with ZMQ_IMMEDIATE (as Lyceum's are) drops the replies it has not read yet
            // when its connection ends: give the last ones a moment to be read.
            try waiter.waitForDescriptors(timeout: Self.lastRepliesGrace)
        }
    }

    // MARK: Sending

    /// Sends a reply (`final`) or, to an 18/MDP client, a PARTIAL, in the client's dialect.
    private func reply(to client: ClientAddress, service: [UInt8], body: some Collection<some OutgoingFrame>, final: Bool = true) throws(ZMQError) {
        let sent = try send(to: client.routingID, envelope: client.envelope) { router throws(ZMQError) in
            try ClientMessage.send(service: service, body: body, on: router, dialect: client.dialect, final: final)
        }
        if !sent {
            logger.log(.warning, "reply dropped: client gone or not reading", ["client": PeerText.excerpt(client.routingID)])
        }
    }

    /// Sends `rejection` under `service`; the log names `naming` (the name the client sent) when given.
    private func reject(_ client: ClientAddress, service: [UInt8], _ rejection: BrokerRejection, naming: [UInt8]? = nil) throws(ZMQError) {
        logger.log(.warning, "request rejected", ["client": PeerText.excerpt(client.routingID), "service": PeerText.excerpt(naming ?? service), "code": rejection.code.rawValue])
        metrics.rejected(rejection.code)
        try reply(to: client, service: service, body: [rejection.frame])
    }

    /// Answers an invalid or unexpected worker command with DISCONNECT in `dialect` and forgets the worker.
    private func refuse(_ sender: [UInt8], _ reason: String, _ dialect: MDPDialect) throws(ZMQError) {
        logger.log(.warning, "unexpected worker command; disconnecting", ["peer": PeerText.excerpt(sender), "reason": reason])
        try disconnect(sender, dialect)
    }

    private func disconnect(_ sender: [UInt8], _ dialect: MDPDialect) throws(ZMQError) {
        if let worker = workers[sender] { remove(worker) }
        try send(to: sender, Self.disconnectFrames[dialect]!)
    }

    /// Each dialect's DISCONNECT and HEARTBEAT, built once.
    private static let disconnectFrames = Dictionary(uniqueKeysWithValues: MDPDialect.allCases.map { ($0, WorkerCommand.disconnect.frames(in: $0)) })
    private static let heartbeatFrames = Dictionary(uniqueKeysWithValues: MDPDialect.allCases.map { ($0, WorkerCommand.heartbeat.frames(in: $0)) })

    /// Sends `peer`'s routing id, the envelope, then the frames `rest` sends, without ever waiting.
    /// - Returns: `false` when the peer is gone or its queue is full, so the message was dropped
    ///   before `rest` was called.
    @discardableResult
    private func send(to peer: [UInt8], envelope: [[UInt8]] = [], _ rest: (Socket) throws(ZMQError) -> Void) throws(ZMQError) -> Bool {
        do {
            // With ROUTER_MANDATORY an absent peer or a full queue shows on the routing id;
            // once that is queued the rest of the message is too.
            guard try router.send(peer, options: [.dontWait, .more]) else { return false }
            let start = router.wireBytesSent
            for frame in envelope { try router.send(frame, options: [.dontWait, .more]) }
            try rest(router)
            connectionGuard.sent(to: peer, wireBytes: router.wireBytesSent &- start)
            return true
        } catch where error.code == .hostUnreachable {
            return false
        }
    }

    /// Sends `peer`'s routing id then `frames`, without ever waiting.
    private func send(to peer: [UInt8], _ frames: [[UInt8]]) throws(ZMQError) {
        try send(to: peer) { router throws(ZMQError) in try router.send(multipart: frames, options: .dontWait) }
    }

    // MARK: Timers

    private func remove(_ worker: WorkerRecord) {
        workers[worker.identity] = nil
        let service = worker.service
        service.workerCount -= 1
        workersChanged = true
        service.waiting.removeAll { $0 === worker }
        if service.isUnused { services[service.name] = nil }
    }

    /// Purges every worker past its expiry, wherever it is in the queue.
    private func purgeExpiredWorkers(now: ContinuousClock.Instant) throws(ZMQError) {
        let expired = workers.values.filter { $0.expiry < now }
        for worker in expired {
            logger.log(.info, "worker expired", ["worker": PeerText.excerpt(worker.identity), "service": PeerText.excerpt(worker.service.name),
                                                  "holding_request": worker.request == nil ? "no" : "yes"])
            remove(worker)
        }
    }

    /// Answers `service_unknown` to requests that waited too long for a service with no worker,
    /// in the name the client addressed; a routed service's target explains its absence itself.
    private func rejectRequestsForAbsentServices(now: ContinuousClock.Instant) throws(ZMQError) {
        for service in Array(services.values) where service.workerCount == 0 {
            while let request = service.requests.first, now - request.enqueued >= configuration.unknownServiceTimeout {
                _ = service.requests.popFirst()
                queuedRequests -= 1
                try reject(request.client, service: request.requestedService ?? service.name, BrokerRejection(
                    code: .serviceUnknown, text: absenceTexts[service.name] ?? "no worker registered for the service"))
            }
            if service.isUnused { services[service.name] = nil }
        }
    }

    private func sendHeartbeats() throws(ZMQError) {
        for worker in workers.values where worker.request == nil {
            try send(to: worker.identity, Self.heartbeatFrames[worker.dialect]!)
        }
    }

    private func disconnectAllWorkers() throws(ZMQError) {
        for worker in workers.values {
            try send(to: worker.identity, Self.disconnectFrames[worker.dialect]!)
        }
        workers.removeAll()
        services.removeAll()
        // Give the DISCONNECTs a moment to leave after the socket is closed.
        try router.set(.linger, to: 500)
        router.close()
    }
}
