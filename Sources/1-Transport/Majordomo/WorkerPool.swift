import Access
import LyceumLifecycle
import LyceumLogging
import ZeroMQ

/// Several 7/MDP worker sessions for one service, served by one thread.
///
/// Each session is a worker as the protocol knows it: a DEALER of its own connected to the
/// broker, READY, one request at a time, answered with a REPLY to exactly the client address it
/// was given, heartbeats, and on a silent broker or a DISCONNECT a new socket after an
/// exponential back-off. The broker hands requests to the sessions as to any workers.
///
/// The handler runs on the pool's thread. It answers at once by returning the reply, or later,
/// from any thread, through the ``DeferredReply`` it is given: a request waiting for a journal
/// sync then holds one session, not the thread, which serves the other sessions meanwhile. So a
/// pool of N sessions has up to N requests in hand and batches their replies, for one thread's
/// worth of CPU. A handler that blocks holds every session of its pool.
///
/// On ``shutdown()`` idle sessions say DISCONNECT at once; sessions with a request in hand send
/// its reply first, waiting up to ``WorkerConfiguration/drainTimeout`` for it. `run()` is meant to
/// be called once.
public final class WorkerPool: Service {
    /// Answers a request body from `caller`: the reply's frames now, or `nil` after arranging for
    /// exactly one `DeferredReply.send(_:)` later. An empty reply is sent as one empty frame.
    /// `caller` is the identity the broker vouched for when the pool trusts it
    /// (``WorkerConfiguration/trustsCallerIdentities``), else `Caller.unverified`.
    public typealias Handler = @Sendable (_ body: [[UInt8]], _ caller: Caller, _ later: DeferredReply) -> [[UInt8]]?

    /// The broker's endpoint.
    public let endpoint: String
    /// The service each session registers with READY.
    public let service: String
    /// The number of sessions, so of requests the pool can have in hand at once.
    public let sessions: Int
    /// Timings.
    public let configuration: WorkerConfiguration
    private let context: Context
    private let handler: Handler
    private let wakeup: Wakeup
    private let outbox: ReplyOutbox

    /// Creates a pool that will connect `sessions` sessions to the broker at `endpoint` when it runs.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` for an empty or `mmi.` service name or
    ///   fewer than one session.
    public init(
        endpoint: String,
        service: String,
        sessions: Int,
        configuration: WorkerConfiguration = WorkerConfiguration(),
        context: Context,
        handler: @escaping Handler
    ) throws(MajordomoError) {
        guard MDP.isOrdinaryService(service) else {
            throw MajordomoError(code: .invalidArgument, service: service, endpoint: endpoint,
                                 detail: "a worker's service name must be non-empty and outside mmi.")
        }
        guard sessions >= 1 else {
            throw MajordomoError(code: .invalidArgument, service: service, endpoint: endpoint,
                                 detail: "a worker pool needs at least one session, not \(sessions)")
        }
        self.endpoint = endpoint
        self.service = service
        self.sessions = sessions
        self.configuration = configuration
        self.context = context
        self.handler = handler
        wakeup = try Wakeup()
        outbox = try ReplyOutbox()
    }

    /// Serves until ``shutdown()``, then lets every session finish its request in hand, reply
    /// and say DISCONNECT, and returns.
    /// - Throws: ``MajordomoError`` when a socket cannot be created or the context is terminated.
    public func run() throws {
        let logger = Logger(component: "worker")
        let engine = WorkerPoolEngine(
            endpoint: endpoint, service: service, sessions: sessions, configuration: configuration, context: context,
            handler: handler, wakeup: wakeup, outbox: outbox, logger: logger)
        do {
            try engine.run()
        } catch {
            logger.log(.error, "worker stopped on a socket error", ["endpoint": endpoint, "service": service, "error": error.description])
            throw MajordomoError(error, service: service)
        }
    }

    /// Asks the pool to stop once its sessions have replied to the requests in hand.
    public func shutdown() {
        wakeup.signal()
    }
}
