import Lifecycle
import Logging
import ZeroMQ

/// A registered worker, as the broker sees it.
final class WorkerRecord {
    let identity: [UInt8]
    let service: ServiceRecord
    /// When the worker is purged unless heard from: a heartbeat expiry while it waits, the
    /// longest request duration while it has a request, so that a slow request never
    /// expires its worker.
    var expiry: ContinuousClock.Instant
    /// The client whose request the worker has in hand; `nil` while it waits.
    var client: [UInt8]?
    /// The routing frames the client put before its empty frame, returned with the reply.
    var envelope: [[UInt8]] = []

    init(identity: [UInt8], service: ServiceRecord, expiry: ContinuousClock.Instant) {
        self.identity = identity
        self.service = service
        self.expiry = expiry
    }
}

/// A client's request waiting for a worker.
struct QueuedRequest {
    let client: [UInt8]
    let envelope: [[UInt8]]
    let body: [[UInt8]]
    let enqueued: ContinuousClock.Instant
}

/// A service's queue of requests and its waiting workers, least recently used first.
final class ServiceRecord {
    let name: [UInt8]
    var requests = FIFO<QueuedRequest>()
    var waiting = FIFO<WorkerRecord>()
    var workerCount = 0

    init(name: [UInt8]) { self.name = name }

    var isUnused: Bool { workerCount == 0 && requests.isEmpty }
}

/// A local service's request waiting for its deferred reply.
struct LocalRequest {
    let client: [UInt8]
    let envelope: [[UInt8]]
    let service: [UInt8]
}

/// The broker's routing state and loop, confined to the thread running ``Broker/run()``.
final class BrokerEngine {
    private let router: Socket
    private let configuration: BrokerConfiguration
    private let localServices: [[UInt8]: LocalService]
    private let outbox: ReplyOutbox
    /// Local requests answered later, by the number their ``DeferredReply`` carries.
    private var localInHand: [UInt64: LocalRequest] = [:]
    private var localInHandByService: [[UInt8]: Int] = [:]
    private var localRequestsTaken: UInt64 = 0
    private let logger: Logger
    private let clock = ContinuousClock()
    private var workers: [[UInt8]: WorkerRecord] = [:]
    private var services: [[UInt8]: ServiceRecord] = [:]
    private var queuedRequests = 0
    private var receiveBuffer = ReceiveBuffer()
    /// The time of the current batch of messages: read once per wake-up rather than once per
    /// message, which is precise enough for expiries of milliseconds and more.
    private var now: ContinuousClock.Instant
    private let publishedSnapshot: Locked<BrokerSnapshot>
    /// Set when a worker registers or goes (and at first, for the local services), so that the
    /// published worker counts follow at once; queue depths are published on every housekeeping pass.
    private var workersChanged = true

    /// How long the router stays open after the last deferred reply of a shutdown.
    private static let lastRepliesGrace = Duration.milliseconds(100)

    /// Messages handled between two looks at the clock, so that a flood cannot starve heartbeats.
    private static let batch = 4096

    init(router: Socket, configuration: BrokerConfiguration, outbox: ReplyOutbox, logger: Logger, snapshot: Locked<BrokerSnapshot>) {
        self.router = router
        self.outbox = outbox
        localServices = Dictionary(uniqueKeysWithValues: configuration.localServices.map { (Array($0.name.utf8), $0) })
        self.publishedSnapshot = snapshot
        self.configuration = configuration
        self.logger = logger
        now = clock.now
    }

    func route(until wakeup: Wakeup) throws(ZMQError) {
        var waiter = try SocketWaiter(sockets: [router], fileDescriptors: [wakeup.fileDescriptor, outbox.fileDescriptor])
        // Whether the router may hold messages its descriptor will not announce: true unless
        // its last use was a receive that found nothing.
        var mayHoldMessages = true
        let housekeeping = max(min(configuration.heartbeat.interval, configuration.unknownServiceTimeout) / 2, .milliseconds(1))
        var nextHeartbeat = clock.now + configuration.heartbeat.interval
        var nextHousekeeping = clock.now + housekeeping
        while !wakeup.isSignaled {
            let deadline = min(nextHeartbeat, nextHousekeeping)
            try waiter.wait(timeout: max(.zero, deadline - clock.now), checkingFirst: mayHoldMessages)
            now = clock.now
            // Everything that arrived is handled in one go, so that a wake-up serves many messages
            // and local services that hand work to other threads wake them once for all.
            var handled = 0
            try BatchedSignals.run { () throws(ZMQError) in
                while handled < Self.batch, let frames = try receiveBuffer.receive(from: router) {
                    try handle(frames)
                    handled += 1
                }
            }
            mayHoldMessages = handled == Self.batch
            // Checked on every pass, not only when the poll saw the pipe: while clients keep the
            // router busy the loop may not poll at all.
            if outbox.hasReplies || waiter.descriptorIsReadable(1) {
                try sendLocalReplies()
                mayHoldMessages = true
            }
            now = clock.now
            if now >= nextHousekeeping {
                try purgeExpiredWorkers(now: now)
                try rejectRequestsForAbsentServices(now: now)
                nextHousekeeping = now + housekeeping
                mayHoldMessages = true
                workersChanged = true
            }
            if workersChanged {
                let current = snapshot()
                publishedSnapshot.withLock { $0 = current }
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

    // MARK: Dispatching messages

    private func handle(_ frames: [[UInt8]]) throws(ZMQError) {
        let sender = frames[0]
        guard frames.count >= 3, frames.count <= configuration.maxFramesPerMessage else {
            return drop(from: sender, "message has \(frames.count) frames")
        }
        if frames[2] == MDP.workerHeader || frames[1] == MDP.workerHeader {
            let command: WorkerCommand
            do {
                command = try WorkerCommand(frames: frames[1...])
            } catch {
                logger.log(.warning, "invalid worker command; disconnecting", ["peer": Logger.display(sender), "reason": error.description])
                return try disconnect(sender)
            }
            try handleWorker(sender, command)
        } else if let delimiter = frames[1...].firstIndex(where: { $0.isEmpty }), delimiter + 1 < frames.count,
                  frames[delimiter + 1] == MDP.clientHeader {
            // Routing frames before the empty one (a proxy's, or an AsyncClient's request tag)
            // are an envelope: kept with the request and returned with its reply.
            let message: ClientMessage
            do { message = try ClientMessage(frames: frames[delimiter...]) } catch { return drop(from: sender, error.description) }
            try handleClient(sender, envelope: Array(frames[1..<delimiter]), message)
        } else {
            drop(from: sender, "no MDPC01 or MDPW01 header after an empty frame")
        }
    }

    private func drop(from sender: [UInt8], _ reason: String) {
        logger.log(.warning, "dropped malformed message", ["peer": Logger.display(sender), "reason": reason])
    }

    private func handleClient(_ client: [UInt8], envelope: [[UInt8]], _ message: ClientMessage) throws(ZMQError) {
        if message.service.starts(with: MDP.managementPrefix) {
            return try reply(to: client, envelope: envelope, service: message.service, body: [managementAnswer(message)])
        }
        if let local = localServices[message.service] {
            return try handleLocally(local, client: client, envelope: envelope, message)
        }
        let existing = services[message.service]
        let service = existing ?? ServiceRecord(name: message.service)
        if service.requests.count >= configuration.maxQueuedRequestsPerService {
            return try reject(client, envelope: envelope, service: message.service, BrokerRejection(
                code: .queueFull, text: "the service's queue holds \(service.requests.count) requests, its limit"))
        }
        if queuedRequests >= configuration.maxQueuedRequests {
            return try reject(client, envelope: envelope, service: message.service, BrokerRejection(
                code: .overloaded, text: "the broker holds \(queuedRequests) queued requests, its limit"))
        }
        // Registered only once a request is accepted, so that rejected ones leave nothing behind.
        if existing == nil { services[message.service] = service }
        service.requests.append(QueuedRequest(client: client, envelope: envelope, body: message.body, enqueued: now))
        queuedRequests += 1
        try dispatch(service)
    }

    /// 8/MMI: `mmi.service` says whether a worker serves the service named in the body; the
    /// configured management services answer from a snapshot.
    private func managementAnswer(_ message: ClientMessage) -> [UInt8] {
        if let answer = configuration.managementServices[String(decoding: message.service, as: UTF8.self)] {
            return answer(snapshot(), message.body)
        }
        guard message.service == MDP.serviceQuery else { return MDP.notImplemented }
        let registered = localServices[message.body[0]] != nil || services[message.body[0]].map { $0.workerCount > 0 } ?? false
        return registered ? MDP.found : MDP.notFound
    }

    private func handleWorker(_ sender: [UInt8], _ command: WorkerCommand) throws(ZMQError) {
        let worker = workers[sender]
        switch command {
        case .ready(let name):
            if worker != nil { return try refuse(sender, "READY from a registered worker") }
            if name.starts(with: MDP.managementPrefix) { return try refuse(sender, "READY for a management service") }
            if localServices[name] != nil { return try refuse(sender, "READY for a service the broker answers itself") }
            if workers.count >= configuration.maxWorkers { return try refuse(sender, "the broker has \(workers.count) workers, its limit") }
            let service = services[name] ?? ServiceRecord(name: name)
            services[name] = service
            let record = WorkerRecord(identity: sender, service: service, expiry: now + configuration.heartbeat.expiry)
            workers[sender] = record
            service.workerCount += 1
            workersChanged = true
            service.waiting.append(record)
            logger.log(.info, "worker registered", ["worker": Logger.display(sender), "service": Logger.display(name)])
            try dispatch(service)
        case .reply(let client, let body):
            guard let worker, worker.client == client else { return try refuse(sender, "REPLY without a matching request") }
            worker.client = nil
            worker.expiry = now + configuration.heartbeat.expiry
            try reply(to: client, envelope: worker.envelope, service: worker.service.name, body: body)
            worker.envelope = []
            worker.service.waiting.append(worker)
            try dispatch(worker.service)
        case .heartbeat:
            guard let worker else { return try refuse(sender, "HEARTBEAT from an unregistered worker") }
            worker.expiry = max(worker.expiry, now + configuration.heartbeat.expiry)
        case .disconnect:
            if let worker {
                logger.log(.info, "worker disconnected", ["worker": Logger.display(sender), "service": Logger.display(worker.service.name)])
                remove(worker)
            }
        case .request:
            try refuse(sender, "REQUEST from a worker")
        }
    }

    /// Sends the service's oldest requests to its least recently used waiting workers.
    private func dispatch(_ service: ServiceRecord) throws(ZMQError) {
        while let request = service.requests.first, let worker = service.waiting.popFirst() {
            let command = WorkerCommand.request(client: request.client, body: request.body)
            if try send(to: worker.identity, command.frames) {
                _ = service.requests.popFirst()
                queuedRequests -= 1
                worker.client = request.client
                worker.envelope = request.envelope
                worker.expiry = max(worker.expiry, now + configuration.maxRequestDuration)
            } else {
                logger.log(.warning, "worker unreachable; purged", ["worker": Logger.display(worker.identity)])
                remove(worker)
            }
        }
    }

    private func snapshot() -> BrokerSnapshot {
        let remote = services.values.map { service in
            BrokerSnapshot.Service(
                name: String(decoding: service.name, as: UTF8.self), workers: service.workerCount,
                idleWorkers: service.waiting.count, queuedRequests: service.requests.count)
        }
        let local = localServices.values.map { service in
            BrokerSnapshot.Service(
                name: service.name, workers: 0, idleWorkers: 0,
                queuedRequests: localInHandByService[Array(service.name.utf8), default: 0], isLocal: true)
        }
        let list = remote + local
        return BrokerSnapshot(services: list.sorted { $0.name < $1.name })
    }

    // MARK: Local services

    /// Answers a local service's request at once, or records it until its deferred reply comes.
    private func handleLocally(_ local: LocalService, client: [UInt8], envelope: [[UInt8]], _ message: ClientMessage) throws(ZMQError) {
        let waiting = localInHandByService[message.service, default: 0]
        if waiting >= configuration.maxQueuedRequestsPerService {
            return try reject(client, envelope: envelope, service: message.service, BrokerRejection(
                code: .queueFull, text: "the service holds \(waiting) requests waiting for their replies, its limit"))
        }
        localRequestsTaken &+= 1
        let later = DeferredReply(outbox: outbox, session: 0, request: localRequestsTaken)
        if let body = local.handler(message.body, later) {
            return try reply(to: client, envelope: envelope, service: message.service, body: body)
        }
        localInHand[localRequestsTaken] = LocalRequest(client: client, envelope: envelope, service: message.service)
        localInHandByService[message.service] = waiting + 1
    }

    /// Sends the deferred replies posted since the last pass.
    private func sendLocalReplies() throws(ZMQError) {
        for posted in outbox.takeAll() {
            guard let request = localInHand.removeValue(forKey: posted.request) else {
                logger.log(.warning, "dropped a second reply to a local request", [:])
                continue
            }
            localInHandByService[request.service, default: 1] -= 1
            try reply(to: request.client, envelope: request.envelope, service: request.service, body: posted.body)
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

    private func reply(to client: [UInt8], envelope: [[UInt8]], service: [UInt8], body: [[UInt8]]) throws(ZMQError) {
        if try !send(to: client, envelope: envelope, ClientMessage(service: service, body: body).frames) {
            logger.log(.warning, "reply dropped: client gone or not reading", ["client": Logger.display(client)])
        }
    }

    private func reject(_ client: [UInt8], envelope: [[UInt8]], service: [UInt8], _ rejection: BrokerRejection) throws(ZMQError) {
        logger.log(.warning, "request rejected", ["client": Logger.display(client), "service": Logger.display(service), "code": rejection.code.rawValue])
        try reply(to: client, envelope: envelope, service: service, body: [rejection.frame])
    }

    /// Answers an invalid or unexpected worker command with DISCONNECT and forgets the worker.
    private func refuse(_ sender: [UInt8], _ reason: String) throws(ZMQError) {
        logger.log(.warning, "unexpected worker command; disconnecting", ["peer": Logger.display(sender), "reason": reason])
        try disconnect(sender)
    }

    private func disconnect(_ sender: [UInt8]) throws(ZMQError) {
        if let worker = workers[sender] { remove(worker) }
        try send(to: sender, WorkerCommand.disconnect.frames)
    }

    /// Sends `peer`'s routing id, the envelope, then `frames`, without ever waiting.
    /// - Returns: `false` when the peer is gone or its queue is full, so the message was dropped.
    @discardableResult
    private func send(to peer: [UInt8], envelope: [[UInt8]] = [], _ frames: [[UInt8]]) throws(ZMQError) -> Bool {
        do {
            // With ROUTER_MANDATORY an absent peer or a full queue shows on the routing id;
            // once that is queued the rest of the message is too.
            guard try router.send(peer, options: [.dontWait, .more]) else { return false }
            for frame in envelope { try router.send(frame, options: [.dontWait, .more]) }
            return try router.send(multipart: frames, options: .dontWait)
        } catch where error.code == .hostUnreachable {
            return false
        }
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
            logger.log(.info, "worker expired", ["worker": Logger.display(worker.identity), "service": Logger.display(worker.service.name),
                                                  "holding_request": worker.client == nil ? "no" : "yes"])
            remove(worker)
        }
    }

    /// Answers `service-unknown` to requests that waited too long for a service with no worker.
    private func rejectRequestsForAbsentServices(now: ContinuousClock.Instant) throws(ZMQError) {
        for service in Array(services.values) where service.workerCount == 0 {
            while let request = service.requests.first, now - request.enqueued >= configuration.unknownServiceTimeout {
                _ = service.requests.popFirst()
                queuedRequests -= 1
                try reject(request.client, envelope: request.envelope, service: service.name, BrokerRejection(
                    code: .serviceUnknown, text: "no worker registered for the service"))
            }
            if service.isUnused { services[service.name] = nil }
        }
    }

    private func sendHeartbeats() throws(ZMQError) {
        let heartbeat = WorkerCommand.heartbeat.frames
        for worker in workers.values where worker.client == nil {
            try send(to: worker.identity, heartbeat)
        }
    }

    private func disconnectAllWorkers() throws(ZMQError) {
        let disconnect = WorkerCommand.disconnect.frames
        for worker in workers.values {
            try send(to: worker.identity, disconnect)
        }
        workers.removeAll()
        services.removeAll()
        // Give the DISCONNECTs a moment to leave after the socket is closed.
        try router.set(.linger, to: 500)
        router.close()
    }
}
