import Foundation
import LyceumLogging
import Synchronization

/// Runs components on their own threads and owns the process's signals: the one place that
/// decides when Lyceum stops.
///
/// - SIGTERM or SIGINT: every component is asked to shut down (last started first), so work in
///   hand finishes; the group waits up to the grace period for them.
/// - A second SIGINT, or the grace period passing: the process exits at once with status 130
///   or 1. Nothing acknowledged is lost: acknowledged writes are already durable.
/// - SIGHUP: the reload action runs (catalog, keys, log level).
/// - A ``ReadinessReporting`` component is ready before the components after it start.
/// - A component that stops or fails by itself stops the others too.
/// - With a ``Readiness``: ``Readiness/started`` is met once every component is started, and
///   ``Readiness/stop()`` is called when stopping begins.
public final class ComponentGroup: Sendable {
    private let components: [(name: String, component: any Component)]
    private let logger: Logger
    private let gracePeriod: Duration
    private let reload: @Sendable () -> Void
    private let readiness: Readiness?
    private let exits = Mutex((count: 0, anyFailed: false))
    /// How long a ``ReadinessReporting`` component may take to become ready.
    private static let readinessTimeout = Duration.seconds(10)

    /// A group of named components, started in order and stopped in reverse order.
    public init(
        _ components: [(name: String, component: any Component)],
        logger: Logger = Logger(component: "lifecycle"),
        gracePeriod: Duration = .seconds(10),
        readiness: Readiness? = nil,
        reload: @escaping @Sendable () -> Void = {}
    ) {
        self.readiness = readiness
        self.components = components
        self.logger = logger
        self.gracePeriod = gracePeriod
        self.reload = reload
    }

    /// Runs until every component has stopped.
    ///
    /// ``TerminationSignals/blockInAllThreads()`` must have been called before any thread started.
    /// - Returns: the process's exit status: 0 after an orderly stop, 1 if a component failed.
    public func run() -> Int32 {
        var threads: [ComponentThread] = []
        for entry in components {
            threads.append(ComponentThread(entry.component, name: entry.name) { [self] error in
                if let error { logger.error("component failed", ["thread": entry.name, "error": "\(error)"]) }
                exits.withLock { $0 = (count: $0.count + 1, anyFailed: $0.anyFailed || error != nil) }
            })
            // The components after this one rely on it (a ZAP handler before the sockets it
            // guards): start none of them until it is ready, and none at all if it cannot be.
            guard let ready = entry.component as? any ReadinessReporting else { continue }
            do {
                try ready.waitUntilReady(timeout: Self.readinessTimeout)
            } catch {
                logger.error("component not ready; stopping", ["thread": entry.name, "error": "\(error)"])
                for thread in threads { thread.stop() }
                return 1
            }
        }
        readiness?.meet(Readiness.started)
        var stopRequestedAt: ContinuousClock.Instant?
        while exits.withLock({ $0.count }) < threads.count {
            if let signal = TerminationSignals.next(within: 100) {
                switch signal {
                case SIGHUP:
                    logger.info("reloading", ["signal": "SIGHUP"])
                    reload()
                case SIGINT where stopRequestedAt != nil:
                    logger.warning("second SIGINT: exiting now")
                    exit(130)
                default:
                    logger.info("stopping", ["signal": signal == SIGINT ? "SIGINT" : "SIGTERM"])
                    stopRequestedAt = stopRequestedAt ?? .now
                    shutdownAll()
                }
            }
            if stopRequestedAt == nil, exits.withLock({ $0.count }) > 0 {
                logger.warning("a component stopped by itself: stopping the others")
                stopRequestedAt = .now
                shutdownAll()
            }
            if stopRequestedAt != nil { stopDependencies(of: threads) }
            if let stopRequestedAt, ContinuousClock.now - stopRequestedAt > gracePeriod {
                logger.error("components did not stop within the grace period", ["grace": "\(gracePeriod)"])
                exit(1)
            }
        }
        for thread in threads { thread.join() }
        return exits.withLock { $0.anyFailed } ? 1 : 0
    }

    /// Asks every component to stop, the last started first; a ``ReadinessReporting`` component is
    /// left running for ``run()`` to stop once every component started after it has stopped.
    public func shutdownAll() {
        readiness?.stop()
        for entry in components.reversed() where !(entry.component is any ReadinessReporting) { entry.component.shutdown() }
    }

    /// Stops each ``ReadinessReporting`` component whose later components have all stopped: they may
    /// rely on it until their last moment (a ZAP handler guards sockets until they close).
    private func stopDependencies(of threads: [ComponentThread]) {
        for index in threads.indices where components[index].component is any ReadinessReporting {
            if threads[(index + 1)...].allSatisfy(\.hasFinished) { threads[index].shutdown() }
        }
    }
}
