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
/// Services come and go while the pool runs (``addService(_:handler:)``,
/// ``removeService(_:completion:)``), from any thread, the others serving throughout: a
/// partitioned worker serves a partition that moved in, or stops serving one moving out, on the
/// one thread of its process.
///
/// On ``shutdown()`` idle sessions say DISCONNECT at once; sessions with a request in hand send
/// its reply first, waiting up to ``WorkerConfiguration/drainTimeout`` for it; removing a service
/// does the same for its sessions alone. `run()` is meant to be called once.
public final class WorkerPool: Component {
    /// Answers a request body from `caller`: the reply's frames now, or `nil` after arranging for
    /// exactly one `DeferredReply.send(_:)` later. An empty reply is sent as one empty frame.
    /// `caller` is the identity the broker vouched for when the pool trusts it
    /// (``WorkerConfiguration/trustsCallerIdentities``), else `Caller.unverified`.
    public typealias Handler = @Sendable (_ body: [[UInt8]], _ caller: Caller, _ later: DeferredReply) -> [[UInt8]]?

    /// The brokers' endpoints; each one is given every service.
    public let endpoints: [String]
    /// The services each broker is told about with READY, in the order added, without those
    /// being removed.
    public var services: [String] { changes.served }
    /// The number of sessions per broker and service, so of requests one broker can have in
    /// hand at once for one service.
    public let sessions: Int
    /// Timings.
    public let configuration: WorkerConfiguration
    private let context: Context
    private let initialServices: [(name: String, handler: Handler)]
    private let wakeup: Wakeup
    private let outbox: ReplyOutbox
    private let changes: WorkerPoolServices

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
        self.sessions = sessions
        self.configuration = configuration
        self.context = context
        initialServices = services
        wakeup = try Wakeup()
        outbox = try ReplyOutbox()
        changes = try WorkerPoolServices(names)
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
        changes.started()
        // Whatever ends the loop, the removals waiting for it complete: nothing is served any more.
        defer { changes.stopped() }
        let engine = WorkerPoolEngine(
            endpoints: endpoints, services: initialServices, sessionsPerRoute: sessions, configuration: configuration, context: context,
            wakeup: wakeup, outbox: outbox, changes: changes, logger: logger)
        do {
            try engine.run()
        } catch {
            let services = services
            logger.log(.error, "worker stopped on a socket error", [
                "endpoints": endpoints.joined(separator: ","), "services": services.joined(separator: ","), "error": error.description,
            ])
            throw MajordomoError(error, service: services.count == 1 ? services[0] : nil)
        }
    }

    /// Starts serving `service` while the pool runs (or once it runs): its sessions connect to
    /// every broker and say READY, and its requests go to `handler`. Callable from any thread.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` for an empty or `mmi.` name, a service
    ///   served already or still being removed, or a pool that has stopped.
    public func addService(_ service: String, handler: @escaping Handler) throws(MajordomoError) {
        try changes.add(service, handler: handler)
    }

    /// Stops serving `service`, the other services serving throughout: its idle sessions say
    /// DISCONNECT to their brokers at once, those with a request in hand once they have replied
    /// (or after ``WorkerConfiguration/drainTimeout``, without the reply); then `completion` is
    /// called, on the pool's thread. Callable from any thread; the service may be added again
    /// once `completion` was called.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` when the pool does not serve `service`
    ///   or is removing it already; nothing changes then.
    public func removeService(_ service: String, completion: @escaping @Sendable () -> Void) throws(MajordomoError) {
        try changes.remove(service, completion: completion)
    }

    /// ``removeService(_:completion:)``, returning once the service's sessions have left.
    /// - Throws: ``MajordomoError/Code/invalidArgument`` as ``removeService(_:completion:)``
    ///   does, and when called on the pool's own thread (from a handler), which would wait forever.
    public func removeService(_ service: String) throws(MajordomoError) {
        guard !changes.isPoolThread else {
            throw MajordomoError(code: .invalidArgument, service: service,
                                 detail: "a handler cannot wait for its own pool to remove a service; pass a completion instead")
        }
        let done = try PoolRemovalSignal()
        try changes.remove(service) { done.signal() }
        done.wait()
    }

    /// Asks the pool to stop once its sessions have replied to the requests in hand.
    public func shutdown() {
        wakeup.signal()
    }
}
