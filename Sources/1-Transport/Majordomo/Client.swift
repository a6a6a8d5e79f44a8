import ZeroMQ

/// A synchronous 7/MDP client: one request at a time, with a timeout and retries on a new
/// socket each (the Lazy Pirate pattern). Speaks plain MDP/Client, so it works with any
/// conforming broker. Not thread-safe: use it from one thread.
public final class Client {
    /// The broker's endpoint.
    public let endpoint: String
    /// Timeout and retries.
    public let configuration: ClientConfiguration
    private let slot: RequestSlot
    private let clock = ContinuousClock()

    /// Creates a client for the broker at `endpoint`; the socket is opened by the first call.
    public init(endpoint: String, configuration: ClientConfiguration = ClientConfiguration(), context: Context) {
        self.endpoint = endpoint
        self.configuration = configuration
        slot = RequestSlot(context: context, endpoint: endpoint, configuration: configuration)
    }

    /// Sends a request and waits for its reply.
    /// - Returns: the reply body.
    /// - Throws: ``MajordomoError`` whose code says whether the request timed out, the broker
    ///   was unreachable, the service is unknown, or the broker's queue was full.
    public func call(_ service: String, body: [[UInt8]]) throws(MajordomoError) -> [[UInt8]] {
        guard !service.isEmpty else {
            throw MajordomoError(code: .invalidArgument, endpoint: endpoint, detail: "empty service name")
        }
        if let problem = MDP.serviceNameProblem(service.utf8) {
            throw MajordomoError(code: .invalidArgument, endpoint: endpoint, detail: "the service name \(problem)")
        }
        let now = clock.now
        let request = RequestSlot.Request(
            service: service, message: ClientMessage(service: Array(service.utf8), body: body),
            deadline: now + configuration.timeout, connectionDeadline: now + configuration.connectionWait)
        let outcome: Result<[[UInt8]], MajordomoError>
        do {
            outcome = try exchange(request)
        } catch {
            slot.close()
            throw MajordomoError(error, service: service)
        }
        return try outcome.get()
    }

    /// Asks the broker (8/MMI `mmi.service`) whether a worker serves `service`.
    public func isRegistered(_ service: String) throws(MajordomoError) -> Bool {
        let answer = try call(String(decoding: MDP.serviceQuery, as: UTF8.self), body: [Array(service.utf8)])
        return answer.first == MDP.found
    }

    /// Closes the socket.
    public func close() { slot.close() }

    /// Sends the request and waits for its reply, retrying until its last attempt's deadline.
    private func exchange(_ request: RequestSlot.Request) throws(ZMQError) -> Result<[[UInt8]], MajordomoError> {
        try slot.start(request)
        while true {
            if let result = try slot.receive() { return result }
            if let failure = try slot.checkDeadline(now: clock.now) { return .failure(failure) }
            guard let socket = slot.socket, let deadline = slot.deadline else { continue }
            var wait = max(.zero, deadline - clock.now)
            // A request waiting for its connection is retried every millisecond.
            if slot.isUnsent { wait = min(wait, .milliseconds(1)) }
            var poller = Poller()
            try poller.add(socket)
            try poller.poll(timeout: wait)
            try slot.trySend()
        }
    }
}
