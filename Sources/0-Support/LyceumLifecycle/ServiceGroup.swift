import Foundation
import LyceumLogging
import Synchronization

/// Runs services on their own threads and owns the process's signals: the one place that
/// decides when Lyceum stops.
///
/// - SIGTERM or SIGINT: every service is asked to shut down (last started first), so work in
///   hand finishes; the group waits up to the grace period for them.
/// - A second SIGINT, or the grace period passing: the process exits at once with status 130
///   or 1. Nothing acknowledged is lost: acknowledged writes are already durable.
/// - SIGHUP: the reload action runs (catalog, log level).
/// - A service that stops or fails by itself stops the others too.
public final class ServiceGroup: Sendable {
    private let services: [(name: String, service: any Service)]
    private let logger: Logger
    private let gracePeriod: Duration
    private let reload: @Sendable () -> Void
    private let exits = Mutex((count: 0, anyFailed: false))

    /// A group of named services, started in order and stopped in reverse order.
    public init(
        _ services: [(name: String, service: any Service)],
        logger: Logger = Logger(component: "lifecycle"),
        gracePeriod: Duration = .seconds(10),
        reload: @escaping @Sendable () -> Void = {}
    ) {
        self.services = services
        self.logger = logger
        self.gracePeriod = gracePeriod
        self.reload = reload
    }

    /// Runs until every service has stopped.
    ///
    /// ``TerminationSignals/blockInAllThreads()`` must have been called before any thread started.
    /// - Returns: the process's exit status: 0 after an orderly stop, 1 if a service failed.
    public func run() -> Int32 {
        let threads = services.map { entry in
            ServiceThread(entry.service, name: entry.name) { [self] error in
                if let error { logger.error("service failed", ["service": entry.name, "error": "\(error)"]) }
                exits.withLock { $0 = (count: $0.count + 1, anyFailed: $0.anyFailed || error != nil) }
            }
        }
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
                logger.warning("a service stopped by itself: stopping the others")
                stopRequestedAt = .now
                shutdownAll()
            }
            if let stopRequestedAt, ContinuousClock.now - stopRequestedAt > gracePeriod {
                logger.error("services did not stop within the grace period", ["grace": "\(gracePeriod)"])
                exit(1)
            }
        }
        for thread in threads { thread.join() }
        return exits.withLock { $0.anyFailed } ? 1 : 0
    }

    /// Asks every service to stop, the last started first.
    public func shutdownAll() {
        for entry in services.reversed() { entry.service.shutdown() }
    }
}
