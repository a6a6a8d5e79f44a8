import LyceumLogging
import Majordomo
import ZeroMQ

/// The client's own thread: it alone touches the sockets. It sends what callers queued in the
/// ``RequestInbox`` through an ``AsyncClient`` (many requests in flight on one DEALER), retries
/// with exponential back-off, and fails over between brokers.
///
/// Retries follow the Lazy Pirate pattern, with fail-over to the next broker in the list (the
/// same one when there is only one); a retried request is the same frame, so a write keeps its
/// `request_id` and the server applies it once. What moves depends on the failure:
/// - `service_unknown`: the broker answered, it only has no worker for that service (or
///   partition). That call alone moves on (its attempt counted); new calls go to a new socket to
///   the next broker, while the old socket stays open for the calls already waiting on it, which
///   get their own replies there. It is closed once none waits (a timeout of one of them
///   presumes it dead, as below).
/// - `timed_out` or `broker_unreachable` (or a socket error): the socket is presumed dead and
///   closed; every call in flight on it loses that attempt and is sent again at once, on a new
///   socket to the next broker when it was the current one.
/// A full queue (`queue_full`, `overloaded`) is retried after the back-off on the same socket.
final class ConnectionLoop {
    /// A socket to one broker and the calls waiting on it, by the id its client gave each.
    private final class Connection {
        let client: AsyncClient
        var inFlight: [AsyncClient.RequestID: PendingCall] = [:]

        init(client: AsyncClient) { self.client = client }

        /// Removes and returns every call waiting on it, in the order they were sent.
        func takeAll() -> [PendingCall] {
            defer { inFlight = [:] }
            return inFlight.sorted { $0.key.value < $1.key.value }.map(\.value)
        }
    }

    private let configuration: LyceumClientConfiguration
    private let inbox: RequestInbox
    private let context: Context
    private let logger = Logger(component: "client")
    /// Where new calls go.
    private var connection: Connection?
    /// Connections left after a `service_unknown`, open until none of their calls waits.
    private var draining: [Connection] = []
    private var brokerIndex = 0
    /// Calls to send as soon as there is room, oldest first.
    private var ready: [PendingCall] = []
    /// Calls waiting out their back-off.
    private var backingOff: [(due: ContinuousClock.Instant, call: PendingCall)] = []
    private let clock = ContinuousClock()

    init(configuration: LyceumClientConfiguration, inbox: RequestInbox, context: Context) {
        self.configuration = configuration
        self.inbox = inbox
        self.context = context
    }

    /// Serves the inbox until it is closed, then finishes every call still open with ``LyceumError/Code/closed``.
    func run() {
        while true {
            let (calls, closed) = inbox.take()
            if closed { return finishAll() }
            ready.append(contentsOf: calls)
            releaseDueCalls()
            sendReadyCalls()
            let wait = backingOff.map(\.due).min().map { max(.zero, $0 - clock.now) }
            let waiting = ([connection].compactMap { $0 } + draining).filter { !$0.inFlight.isEmpty }
            do throws(MajordomoError) {
                if waiting.isEmpty {
                    do throws(ZMQError) { try inbox.wait(timeout: wait) } catch { throw MajordomoError(code: .socket, detail: error.description) }
                } else if let received = try AsyncClient.receive(from: waiting.map(\.client), timeout: wait),
                          let owner = waiting.first(where: { $0.client === received.client }) {
                    handle(received.completion, on: owner)
                }
            } catch {
                // Which socket failed is not known: none is trusted any more.
                logger.warning("client socket failed", ["endpoint": currentBroker, "error": error.description])
                for dead in draining + [connection].compactMap({ $0 }) { abandon(dead, after: error) }
            }
            closeDrainedConnections()
        }
    }

    private var currentBroker: String { configuration.brokers[brokerIndex] }

    private func releaseDueCalls() {
        let now = clock.now
        guard backingOff.contains(where: { $0.due <= now }) else { return }
        ready.append(contentsOf: backingOff.filter { $0.due <= now }.map(\.call))
        backingOff.removeAll { $0.due <= now }
    }

    private func sendReadyCalls() {
        while let call = ready.first {
            let connection = self.connection ?? openConnection()
            do {
                let id = try connection.client.send(call.service, body: [call.body])
                ready.removeFirst()
                connection.inFlight[id] = call
            } catch where error.code == .tooManyInFlight {
                return
            } catch {
                // The socket could not be made or used: count it as this call's failed attempt.
                ready.removeFirst()
                retry(call, after: error)
                return abandon(connection, after: error)
            }
        }
    }

    private func openConnection() -> Connection {
        let client = AsyncClient(
            endpoint: currentBroker, capacity: configuration.maxInFlight,
            configuration: ClientConfiguration(timeout: configuration.timeout, attempts: 1, security: configuration.curve?.security ?? .plaintext),
            context: context, wakeup: inbox.wakeup)
        let connection = Connection(client: client)
        self.connection = connection
        return connection
    }

    private func handle(_ completion: AsyncClient.Completion, on owner: Connection) {
        guard let call = owner.inFlight.removeValue(forKey: completion.id) else { return }
        switch completion.result {
        case .success(let body):
            guard body.count == 1 else {
                return call.finish(.failure(LyceumError(
                    code: .invalidReply, message: "a reply of \(body.count) frames; Lyceum replies with one",
                    service: call.service, op: call.op, endpoint: owner.client.endpoint)))
            }
            call.finish(.success(body[0]))
        case .failure(let error) where error.code == .queueFull || error.code == .brokerOverloaded:
            retry(call, after: error)
        case .failure(let error) where error.code == .serviceUnknown:
            retry(call, after: error)
            if owner === connection { leaveConnection(after: error) }
        case .failure(let error) where error.code == .timedOut || error.code == .brokerUnreachable:
            // A broker silent for a whole timeout has most likely lost every call on the socket
            // (it died, or the network did): waiting out each call's own timeout would only
            // delay their retries, so the socket is given up at once.
            retry(call, after: error)
            abandon(owner, after: error)
        case .failure(let error):
            call.finish(.failure(LyceumError(error, op: call.op)))
        }
    }

    /// Schedules the call's next attempt after its back-off, or fails it when it has had them all.
    private func retry(_ call: PendingCall, after error: MajordomoError) {
        var next = call
        next.reachedBroker = call.reachedBroker || error.code == .timedOut
        guard call.attempt < configuration.attempts else {
            return call.finish(.failure(finalError(of: next, after: error, detail: "\(error.detail) (attempt \(call.attempt))")))
        }
        next.attempt += 1
        backingOff.append((clock.now + configuration.backoff(beforeAttempt: next.attempt), next))
    }

    /// Sends new calls to the next broker from now on.
    private func moveToNextBroker(after error: MajordomoError) {
        let from = currentBroker
        connection = nil
        brokerIndex = (brokerIndex + 1) % configuration.brokers.count
        if configuration.brokers.count > 1 {
            logger.info("failing over", ["from": from, "to": currentBroker, "reason": error.code.rawValue])
        }
    }

    /// Moves new calls to the next broker after the current one answered `service_unknown`: it
    /// is alive, so its socket stays open for the calls waiting on it.
    private func leaveConnection(after error: MajordomoError) {
        guard let left = connection else { return }
        moveToNextBroker(after: error)
        draining.append(left)
    }

    /// Closes the calls' connection, presumed dead. The calls that were in flight on it lose that
    /// attempt: they are sent again first (they were sent before anything still waiting), or
    /// fail if it was their last. New calls go to the next broker when it was the current one.
    private func abandon(_ dead: Connection, after error: MajordomoError) {
        dead.client.close()
        draining.removeAll { $0 === dead }
        if dead === connection { moveToNextBroker(after: error) }
        var retries: [PendingCall] = []
        for call in dead.takeAll() {
            guard call.attempt < configuration.attempts else {
                var failure = finalError(of: call, after: error, detail: "abandoned on its last attempt when the connection failed: \(error.detail)")
                failure.endpoint = dead.client.endpoint
                call.finish(.failure(failure))
                continue
            }
            var next = call
            next.attempt += 1
            retries.append(next)
        }
        ready = retries + ready
    }

    /// Closes the connections left behind that no call waits on any more.
    private func closeDrainedConnections() {
        guard draining.contains(where: { $0.inFlight.isEmpty }) else { return }
        for drained in draining where drained.inFlight.isEmpty { drained.client.close() }
        draining.removeAll { $0.inFlight.isEmpty }
    }

    /// The error a call fails with after its last attempt: `timed_out` when any attempt reached
    /// a broker (so the request may have been handled), else the last attempt's.
    private func finalError(of call: PendingCall, after error: MajordomoError, detail: String) -> LyceumError {
        var failure = LyceumError(error, op: call.op)
        failure.service = call.service
        failure.message = detail
        if call.reachedBroker && failure.code == .brokerUnreachable {
            failure.code = .timedOut
            failure.message += "; an earlier attempt reached a broker and had no reply"
        }
        return failure
    }

    private func finishAll() {
        let connections = [connection].compactMap { $0 } + draining
        connection = nil
        draining = []
        for open in connections { open.client.close() }
        let open = connections.flatMap { $0.takeAll() } + ready + backingOff.map(\.call) + inbox.take().calls
        ready = []
        backingOff = []
        for call in open {
            call.finish(.failure(LyceumError(code: .closed, message: "the client was closed before the reply came", service: call.service, op: call.op)))
        }
    }
}
