import LyceumLifecycle
import LyceumLogging
import LyceumSupport
import Synchronization
import ZeroMQ

/// A 7/MDP broker: one ROUTER, bound to one or more endpoints, serving clients and workers.
///
/// It routes requests by service name to waiting workers, least recently used first; queues
/// requests for busy or absent services within bounds, answering with a ``BrokerRejection``
/// rather than silence when it cannot; purges workers that stop heartbeating; sends DISCONNECT
/// for invalid or unexpected worker commands; and answers 8/MMI `mmi.*` itself, as well as any
/// ``LocalService`` of its configuration. `run()` is meant to be called once.
public final class Broker: Component {
    /// The endpoints to bind, such as `tcp://127.0.0.1:*`.
    public let endpoints: [String]
    /// Timings and bounds.
    public let configuration: BrokerConfiguration
    private let context: Context
    private let wakeup: Wakeup
    private let outbox: ReplyOutbox
    private let binding = AwaitedResult<[String], MajordomoError>()
    private let latestSnapshot = Mutex(BrokerSnapshot.empty)

    /// Creates a broker that will bind `endpoints` when it runs.
    public init(endpoints: [String], configuration: BrokerConfiguration = BrokerConfiguration(), context: Context) throws(MajordomoError) {
        guard !endpoints.isEmpty else {
            throw MajordomoError(code: .invalidArgument, detail: "a broker needs at least one endpoint to bind")
        }
        for local in configuration.localServices where !MDP.isOrdinaryService(local.name) {
            throw MajordomoError(code: .invalidArgument, service: local.name, detail: "a local service's name must be non-empty and outside mmi.")
        }
        guard Set(configuration.localServices.map(\.name)).count == configuration.localServices.count else {
            throw MajordomoError(code: .invalidArgument, detail: "two local services have the same name")
        }
        self.endpoints = endpoints
        self.configuration = configuration
        self.context = context
        wakeup = try Wakeup()
        outbox = try ReplyOutbox()
    }

    /// Binds, then routes until ``shutdown()``. Stopping, it refuses every queued and every new
    /// request with `service_unknown` (which Lyceum's clients retry at once through their next
    /// broker) while it still routes the replies to the requests its workers have in hand, for
    /// up to 5 s (protocol/majordomo.md, *A broker that stops*); then the local services' deferred
    /// replies are sent (waiting up to `maxRequestDuration`) and every registered worker gets DISCONNECT.
    /// - Throws: ``MajordomoError`` when an endpoint cannot be bound or the context is terminated.
    public func run() throws {
        let logger = Logger(component: "broker")
        let router: Socket
        do {
            router = try context.socket(.router)
            try router.set(.routerMandatory, to: true)
            try router.set(.maxMessageSize, to: configuration.maxFrameSize)
            try router.set(.sendHighWaterMark, to: configuration.highWaterMark)
            try router.set(.receiveHighWaterMark, to: configuration.receiveHighWaterMark)
            try router.secure(configuration.security)
            for endpoint in endpoints { try router.bind(endpoint) }
        } catch {
            let failure = MajordomoError(error)
            binding.settle(.failure(failure))
            logger.log(.error, "cannot bind", ["error": failure.description])
            throw failure
        }
        binding.settle(.success(router.endpoints))
        logger.log(.info, "broker listening", ["endpoints": router.endpoints.joined(separator: ",")])
        do {
            let engine = try BrokerEngine(router: router, configuration: configuration, outbox: outbox, logger: logger) { [self] current in
                latestSnapshot.withLock { $0 = current }
            }
            try engine.route(until: wakeup)
        } catch {
            logger.log(.error, "broker stopped on a socket error", ["error": error.description])
            throw MajordomoError(error)
        }
        logger.log(.info, "broker stopped")
    }

    /// Stops taking requests; `run()` returns once the requests in hand are answered, after
    /// sending DISCONNECT to the registered workers.
    public func shutdown() {
        wakeup.signal()
    }

    /// The broker's services, workers and queues: worker counts as of the last registration or
    /// departure, queue depths as of the last housekeeping pass (about a second old at most
    /// while it runs). Safe to read from any thread.
    public var snapshot: BrokerSnapshot { latestSnapshot.withLock { $0 } }

    /// Waits until `run()` has bound its endpoints.
    /// - Returns: the bound endpoints, wildcard ports resolved, in the order given.
    /// - Throws: the bind failure, or ``MajordomoError/Code/timedOut`` after `timeout`.
    public func waitUntilBound(timeout: Duration = .seconds(5)) throws(MajordomoError) -> [String] {
        guard let bound = binding.wait(timeout: timeout) else {
            throw MajordomoError(code: .timedOut, endpoint: endpoints.joined(separator: ","), detail: "the broker has not bound its endpoints yet")
        }
        return try bound.get()
    }
}
