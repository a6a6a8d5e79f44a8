import Majordomo
import Synchronization
import ZeroMQ

/// The source's connection for a move's requests to another node's service, through the
/// brokers: one Majordomo client per broker, tried in order, the next one when a broker does not
/// answer; used by one request at a time. Every request of a move may be sent again (a repeated
/// `begin` starts the copy over, a repeated chunk, `finish` or `adopt` changes nothing), so
/// resending after a timeout, to the same broker or another, is safe.
public final class NodeCaller: Sendable {
    /// One client per broker, which are not thread-safe: one request at a time uses them.
    private let clients: Mutex<[Client]>
    private let context: Context

    /// A caller through the brokers at `endpoints`. The time limit covers the slowest request,
    /// an `adopt`, which replays the partition's journal before it answers.
    public init(endpoints: [String], security: SocketSecurity, timeout: Duration = .seconds(60)) throws {
        let context = try Context()
        self.context = context
        var configuration = ClientConfiguration(timeout: timeout, attempts: 2)
        configuration.security = security
        clients = Mutex(endpoints.map { Client(endpoint: $0, configuration: configuration, context: context) })
    }

    deinit { clients.withLock { $0.forEach { $0.close() } } }

    /// Sends `frames` to `service` and returns the reply's frames.
    /// - Throws: `MajordomoError` when no broker brings a reply.
    public func call(_ service: String, _ frames: [[UInt8]]) throws -> [[UInt8]] {
        try clients.withLock { clients throws(MajordomoError) in
            var lastError: MajordomoError?
            for client in clients {
                switch Result(catching: { () throws(MajordomoError) in try client.call(service, body: frames) }) {
                case .success(let reply): return reply
                case .failure(let error) where error.code.callsForAnotherBroker: lastError = error
                case .failure(let error): throw error
                }
            }
            throw lastError ?? MajordomoError(code: .brokerUnreachable, service: service, detail: "no broker endpoint is configured")
        }
    }
}
