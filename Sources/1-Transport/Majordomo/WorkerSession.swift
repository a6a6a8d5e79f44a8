import LyceumLifecycle
import LyceumSupport
import ZeroMQ

/// One 7/MDP worker serving one request at a time with a handler that answers at once: a
/// ``WorkerPool`` of one session.
///
/// It sends READY, answers each REQUEST with a REPLY to exactly the client address it was
/// given, heartbeats, and on a silent broker or a DISCONNECT starts over on a new socket after
/// an exponential back-off. The time a request takes never counts as broker silence. Run
/// several sessions, each on its own thread (``ComponentThread``), to serve several requests at
/// once, or one ``WorkerPool``; `run()` is meant to be called once.
public final class WorkerSession: Component {
    /// Turns a request body into a reply body; both are opaque frames. An empty reply is sent
    /// as one empty frame.
    public typealias Handler = @Sendable ([[UInt8]]) -> [[UInt8]]

    private let pool: WorkerPool

    /// The broker's endpoint.
    public var endpoint: String { pool.endpoints[0] }
    /// The service registered with READY.
    public var service: String { pool.services[0] }
    /// Timings.
    public var configuration: WorkerConfiguration { pool.configuration }

    /// Creates a session that will connect to the broker at `endpoint` when it runs.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` for an empty or `mmi.` service name.
    public init(
        endpoint: String,
        service: String,
        configuration: WorkerConfiguration = WorkerConfiguration(),
        context: Context,
        handler: @escaping Handler
    ) throws(MajordomoError) {
        pool = try WorkerPool(
            endpoint: endpoint, service: service, sessions: 1, configuration: configuration, context: context
        ) { body, _, _ in handler(body) }
    }

    /// Serves until ``shutdown()``: then finishes the request in hand, replies, sends DISCONNECT
    /// and returns.
    /// - Throws: ``MajordomoError`` when a socket cannot be created or the context is terminated.
    public func run() throws {
        try pool.run()
    }

    /// Asks the session to stop after the request in hand.
    public func shutdown() {
        pool.shutdown()
    }
}
