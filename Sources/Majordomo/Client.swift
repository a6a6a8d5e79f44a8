import ZeroMQ

/// A synchronous 7/MDP client: one request at a time, with a timeout and retries on a new
/// socket each (the Lazy Pirate pattern). Not thread-safe: use it from one thread.
public final class Client {
    private let requests: AsyncClient

    /// Creates a client for the broker at `endpoint`; the socket is opened by the first call.
    public init(endpoint: String, configuration: ClientConfiguration = ClientConfiguration(), context: Context) {
        requests = AsyncClient(endpoint: endpoint, capacity: 1, configuration: configuration, context: context)
    }

    /// The broker's endpoint.
    public var endpoint: String { requests.endpoint }

    /// Sends a request and waits for its reply.
    /// - Returns: the reply body.
    /// - Throws: ``MajordomoError`` whose code says whether the request timed out, the broker
    ///   was unreachable, the service is unknown, or the broker's queue was full.
    public func call(_ service: String, body: [[UInt8]]) throws(MajordomoError) -> [[UInt8]] {
        let id = try requests.send(service, body: body)
        // With one slot the first completion is this request's; every request completes by
        // its last deadline, so the loop ends.
        while let completion = try requests.receive() {
            if completion.id == id { return try completion.result.get() }
        }
        throw MajordomoError(code: .timedOut, service: service, endpoint: endpoint, detail: "the request was abandoned")
    }

    /// Asks the broker (8/MMI `mmi.service`) whether a worker serves `service`.
    public func isRegistered(_ service: String) throws(MajordomoError) -> Bool {
        let answer = try call(String(decoding: MDP.serviceQuery, as: UTF8.self), body: [Array(service.utf8)])
        return answer.first == MDP.found
    }

    /// Closes the socket.
    public func close() { requests.close() }
}
