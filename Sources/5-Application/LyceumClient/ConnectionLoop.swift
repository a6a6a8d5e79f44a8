import LyceumLogging
import Majordomo
import ZeroMQ

/// The client's own thread: it alone touches the sockets. It sends what callers queued in the
/// ``RequestInbox`` through an ``AsyncClient`` (many requests in flight on one DEALER), retries
/// with exponential back-off, and fails over between brokers.
///
/// Retries follow the Lazy Pirate pattern: when a request times out, finds no broker, or finds
/// the service unknown, the socket is closed and a new one connects to the next broker (the same
/// one when there is only one); every request that was in flight on the old socket is sent again
/// on the new one. A retried request is the same frame, so a write keeps its `request_id` and
/// the server applies it once. A full queue (`queue_full`, `overloaded`) is retried after the
/// back-off on the same socket.
final class ConnectionLoop {
    private let configuration: LyceumClientConfiguration
    private let inbox: RequestInbox
    private let context: Context
    private let logger = Logger(component: "client")
    private var client: AsyncClient?
    private var brokerIndex = 0
    private var inFlight: [AsyncClient.RequestID: PendingCall] = [:]
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
            do throws(MajordomoError) {
                if let client, !inFlight.isEmpty {
                    if let completion = try client.receive(timeout: wait) { handle(completion) }
                } else {
                    do throws(ZMQError) { try inbox.wait(timeout: wait) } catch { throw MajordomoError(code: .socket, detail: error.description) }
                }
            } catch {
                logger.warning("client socket failed", ["endpoint": currentBroker, "error": error.description])
                failOver(abandoning: error)
            }
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
            let client = self.client ?? openClient()
            do {
                let id = try client.send(call.service, body: [call.body])
                ready.removeFirst()
                inFlight[id] = call
            } catch where error.code == .tooManyInFlight {
                return
            } catch {
                // The socket could not be made or used: count it as this call's failed attempt.
                ready.removeFirst()
                return retry(call, after: error, failingOver: true)
            }
        }
    }

    private func openClient() -> AsyncClient {
        let client = AsyncClient(
            endpoint: currentBroker, capacity: configuration.maxInFlight,
            configuration: ClientConfiguration(timeout: configuration.timeout, attempts: 1, security: configuration.curve?.security ?? .plaintext),
            context: context, wakeup: inbox.wakeup)
        self.client = client
        return client
    }

    private func handle(_ completion: AsyncClient.Completion) {
        guard let call = inFlight.removeValue(forKey: completion.id) else { return }
        switch completion.result {
        case .success(let body):
            guard body.count == 1 else {
                return call.finish(.failure(LyceumError(
                    code: .invalidReply, message: "a reply of \(body.count) frames; Lyceum replies with one",
                    service: call.service, op: call.op, endpoint: currentBroker)))
            }
            call.finish(.success(body[0]))
        case .failure(let error) where error.code == .queueFull || error.code == .brokerOverloaded:
            retry(call, after: error, failingOver: false)
        case .failure(let error) where error.code == .timedOut || error.code == .brokerUnreachable || error.code == .serviceUnknown:
            retry(call, after: error, failingOver: true)
        case .failure(let error):
            call.finish(.failure(LyceumError(error, op: call.op)))
        }
    }

    /// Schedules the call's next attempt after its back-off, or fails it when it has had them all.
    private func retry(_ call: PendingCall, after error: MajordomoError, failingOver: Bool) {
        defer { if failingOver { failOver(abandoning: error) } }
        var next = call
        next.reachedBroker = call.reachedBroker || error.code == .timedOut
        guard call.attempt < configuration.attempts else {
            return call.finish(.failure(finalError(of: next, after: error, detail: "\(error.detail) (attempt \(call.attempt))")))
        }
        next.attempt += 1
        backingOff.append((clock.now + configuration.backoff(beforeAttempt: next.attempt), next))
    }

    /// Closes the socket and moves on to the next broker. The calls that were in flight on it
    /// lose that attempt: they are sent again on the new socket, or fail if it was their last.
    private func failOver(abandoning error: MajordomoError) {
        guard let client else { return }
        client.close()
        self.client = nil
        let abandoned = inFlight.sorted { $0.key.value < $1.key.value }.map(\.value)
        inFlight = [:]
        let from = currentBroker
        brokerIndex = (brokerIndex + 1) % configuration.brokers.count
        if configuration.brokers.count > 1 {
            logger.info("failing over", ["from": from, "to": currentBroker, "reason": error.code.rawValue])
        }
        var retries: [PendingCall] = []
        for call in abandoned {
            guard call.attempt < configuration.attempts else {
                var failure = finalError(of: call, after: error, detail: "abandoned on its last attempt when the connection failed: \(error.detail)")
                failure.endpoint = from
                call.finish(.failure(failure))
                continue
            }
            var next = call
            next.attempt += 1
            retries.append(next)
        }
        // They were sent before anything still waiting, so they go first again.
        ready = retries + ready
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
        client?.close()
        client = nil
        let open = inFlight.values.map { $0 } + ready + backingOff.map(\.call) + inbox.take().calls
        inFlight = [:]
        ready = []
        backingOff = []
        for call in open {
            call.finish(.failure(LyceumError(code: .closed, message: "the client was closed before the reply came", service: call.service, op: call.op)))
        }
    }
}
