import Foundation
import Lifecycle
import Logging
import Majordomo
import ZeroMQ

/// The long-running subcommands: `serve`, `broker` and `worker`. Each returns the process's exit
/// status after an orderly stop, having released its ZeroMQ context (which delivers the last
/// replies and DISCONNECTs) and closed its journals.
public enum Commands {
    /// The endpoint in-process workers reach `serve`'s broker on.
    static let inprocEndpoint = "inproc://lyceum-workers"

    /// `lyceum serve`: a broker and workers for every service in one process.
    public static func serve(_ settings: Settings) -> Int32 {
        Logger.configure(level: settings.logLevel, format: Logger.defaultFormat)
        let logger = Logger(component: "serve")
        let host: ServiceHost
        do {
            host = try ServiceHost(serving: ServiceName.allCases, settings: settings)
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return 1
        }
        defer { host.close() }
        do {
            return try runGroup(logger: logger, reload: { host.reloadCatalog() }) { context in
                let broker = try Broker(endpoints: settings.endpoints + [inprocEndpoint], context: context)
                let workers = try workerSessions(for: host, endpoint: inprocEndpoint, settings: settings, context: context)
                return [("serve", DrainingBroker(broker: broker, workers: workers))]
            }
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return 1
        }
    }

    /// `lyceum broker`: only the broker, bound to `settings.endpoints`.
    public static func broker(_ settings: Settings) -> Int32 {
        Logger.configure(level: settings.logLevel, format: Logger.defaultFormat)
        let logger = Logger(component: "broker")
        do {
            return try runGroup(logger: logger, reload: {}) { context in
                [("broker", try Broker(endpoints: settings.endpoints, context: context))]
            }
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return 1
        }
    }

    /// `lyceum worker`: workers for `settings.services`, connected to the broker at `settings.broker`.
    public static func worker(_ settings: Settings) -> Int32 {
        Logger.configure(level: settings.logLevel, format: Logger.defaultFormat)
        let logger = Logger(component: "worker")
        let host: ServiceHost
        do {
            host = try ServiceHost(serving: settings.services, settings: settings)
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return 1
        }
        defer { host.close() }
        do {
            return try runGroup(logger: logger, reload: { host.reloadCatalog() }) { context in
                try workerSessions(for: host, endpoint: settings.broker, settings: settings, context: context)
            }
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return 1
        }
    }

    /// `settings.sessionsPerService` worker sessions for each of `host`'s services.
    static func workerSessions(
        for host: ServiceHost, endpoint: String, settings: Settings, context: Context
    ) throws(MajordomoError) -> [(name: String, service: any Service)] {
        var sessions: [(name: String, service: any Service)] = []
        for service in host.services {
            let handler = FrameHandler.handler(for: service)
            for index in 0..<settings.sessionsPerService {
                let session = try WorkerSession(endpoint: endpoint, service: service.name, context: context, handler: handler)
                sessions.append(("\(service.name)-\(index)", session))
            }
        }
        return sessions
    }

    /// Runs the services `make` creates on a fresh context until a signal stops them. The
    /// context and every service are released before this returns, so the last messages are
    /// delivered before the caller closes journals or exits.
    private static func runGroup(
        logger: Logger, reload: @escaping @Sendable () -> Void,
        _ make: (Context) throws -> [(name: String, service: any Service)]
    ) throws -> Int32 {
        let context = try Context()
        let services = try make(context)
        logger.info("starting", ["services": services.map(\.name).joined(separator: ",")])
        let status = ServiceGroup(services, reload: reload).run()
        logger.info("stopped", ["status": String(status)])
        return status
    }
}
