import Access
import LyceumLifecycle
import LyceumLogging
import ZeroMQ

/// 7/MDP worker sessions for several services at several brokers, served by one thread.
///
/// The pool opens `sessions` sessions for every pair of a broker endpoint and a service, so each
/// broker sees every service with the same capacity and a client may reach any service through
/// any broker. Each session is a worker as the protocol knows it: a DEALER of its own connected
/// to its broker, READY for its service, one request at a time, answered with a REPLY to exactly
/// the client address it was given, heartbeats, and on a silent broker or a DISCONNECT a new
/// socket after an exponential back-off. A broker that dies costs only its own sessions: the
/// others keep serving, and the lost ones register again once it is back.
///
/// Each service's handler runs on the pool's thread, for requests from any broker. It answers at
/// once by returning the reply, or later, from any thread, through the ``DeferredReply`` it is
/// given: a request waiting for a journal sync then holds one session, not the thread, which
/// serves the other sessions meanwhile. So a pool has up to one request in hand per session and
/// batches their replies, for one thread's worth of CPU. A handler that blocks holds every
/// session of its pool.
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

    /// The brokers' endpoints; each one is given every service.
    public let endpoints: [String]
    /// The services each broker is told about with READY, in the order given.
    public let services: [String]
    /// The number of sessions per broker and service, so of requests one broker can have in
    /// hand at once for one service.
    public let sessions: Int
    /// Timings.
    public let configuration: WorkerConfiguration
    private let context: Context
    private let handlers: [Handler]
    private let wakeup: Wakeup
    private let outbox: ReplyOutbox

    /// Creates a pool that will connect `sessions` sessions for each of `services` to each broker
    /// in `endpoints` when it runs; each service's requests go to its handler.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` for no endpoint, an endpoint given twice,
    ///   no service, a service given twice, an empty or `mmi.` service name, or fewer than one
    ///   session.
    public init(
        endpoints: [String],
        services: [(name: String, handler: Handler)],
        sessions: Int,
        configuration: WorkerConfiguration = WorkerConfiguration(),
        context: Context
    ) throws(MajordomoError) {
        guard !endpoints.isEmpty, Set(endpoints).count == endpoints.count else {
            throw MajordomoError(code: .invalidArgument, detail: "a worker pool needs one or more distinct broker endpoints, not \(endpoints)")
        }
        let names = services.map(\.name)
        guard !names.isEmpty, Set(names).count == names.count else {
            throw MajordomoError(code: .invalidArgument, detail: "a worker pool needs one or more distinct services, not \(names)")
        }
        if let invalid = names.first(where: { !MDP.isOrdinaryService($0) }) {
            throw MajordomoError(code: .invalidArgument, service: invalid,
                                 detail: "a worker's service name must be non-empty and outside mmi.")
        }
        guard sessions >= 1 else {
            throw MajordomoError(code: .invalidArgument, detail: "a worker pool needs at least one session, not \(sessions)")
        }
        self.endpoints = endpoints
        self.services = names
        self.sessions = sessions
        self.configuration = configuration
        self.context = context
        handlers = services.map(\.handler)
        wakeup = try Wakeup()
        outbox = try ReplyOutbox()
    }

    /// Creates a pool that will connect `sessions` sessions for `service` to the broker at
    /// `endpoint` when it runs.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` for an empty or `mmi.` service name or
    ///   fewer than one session.
    public convenience init(
        endpoint: String,
        service: String,
        sessions: Int,
        configuration: WorkerConfiguration = WorkerConfiguration(),
        context: Context,
        handler: @escaping Handler
    ) throws(MajordomoError) {
        try self.init(endpoints: [endpoint], services: [(service, handler)], sessions: sessions,
                      configuration: configuration, context: context)
    }

    /// Serves until ``shutdown()``, then lets every session finish its request in hand, reply
    /// and say DISCONNECT, and returns.
    /// - Throws: ``MajordomoError`` when a socket cannot be created or the context is terminated.
    public func run() throws {
        let logger = Logger(component: "worker")
        let routes = endpoints.flatMap { endpoint in
            zip(services, handlers).map { WorkerPoolEngine.Route(endpoint: endpoint, service: $0, handler: $1) }
        }
        let engine = WorkerPoolEngine(
            routes: routes, sessionsPerRoute: sessions, configuration: configuration, context: context,
            wakeup: wakeup, outbox: outbox, logger: logger)
        do {
            try engine.run()
        } catch {
            logger.log(.error, "worker stopped on a socket error", [
                "endpoints": endpoints.joined(separator: ","), "services": services.joined(separator: ","), "error": error.description,
            ])
            throw MajordomoError(error, service: services.count == 1 ? services[0] : nil)
        }
    }

    /// Asks the pool to stop once its sessions have replied to the requests in hand.
    public func shutdown() {
        wakeup.signal()
    }
}
