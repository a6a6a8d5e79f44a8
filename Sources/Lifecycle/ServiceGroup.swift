import Foundation
import Logging
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
    private let services: [any Service]
    private let logger: Logger
    private let gracePeriod: Duration
    private let reload: @Sendable () -> Void
    private let finished = FinishedServices()

    /// A group of `services`, started in order and stopped in reverse order.
    public init(
        services: [any Service],
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
    /// - Returns: the process's exit status: 0 after an orderly stop, 1 if a service failed.
    ///   ``TerminationSignals/blockInAllThreads()`` must have been called before any thread started.
    public func run() -> Int32 {
        for service in services {
            let thread = Thread { [finished, logger] in
                do {
                    try service.run()
                    finished.record(failed: false)
                } catch {
                    logger.error("service failed", ["service": service.name, "error": "\(error)"])
                    finished.record(failed: true)
                }
            }
            thread.name = service.name
            thread.start()
        }
        var stopRequestedAt: ContinuousClock.Instant?
        while finished.count < services.count {
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
            if stopRequestedAt == nil, finished.count > 0 {
                logger.warning("a service stopped by itself: stopping the others")
                stopRequestedAt = .now
                shutdownAll()
            }
            if let stopRequestedAt, ContinuousClock.now - stopRequestedAt > gracePeriod {
                logger.error("services did not stop within the grace period", ["grace": "\(gracePeriod)"])
                exit(1)
            }
        }
        return finished.anyFailed ? 1 : 0
    }

    /// Asks every service to stop, the last started first.
    public func shutdownAll() {
        for service in services.reversed() { service.shutdown() }
    }
}

/// How many services have returned from `run()`, and whether any failed.
private final class FinishedServices: Sendable {
    private let state = Mutex((count: 0, anyFailed: false))

    func record(failed: Bool) {
        state.withLock { $0 = (count: $0.count + 1, anyFailed: $0.anyFailed || failed) }
    }

    var count: Int { state.withLock { $0.count } }
    var anyFailed: Bool { state.withLock { $0.anyFailed } }
}
