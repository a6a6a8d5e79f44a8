import JSON
import Journal
import LyceumSupport
import Majordomo
import ServiceHosting
import Telemetry

/// What one Lyceum process can say about itself: how long it has run and, for `mmi.status`,
/// its broker's services and its journals. `GET /metrics` renders the process's metrics
/// backend, which the subsystems push to; only the uptime, and what `refresh` records (a
/// replicating worker's replica gauges), are recorded when scraped.
public struct ProcessReport: Sendable {
    /// The management service `lyceum status` asks.
    public static let statusService = "mmi.status"

    /// The process's role: `serve`, `broker` or `worker`.
    public let role: String
    /// When the process started.
    public let started: ContinuousClock.Instant
    /// The journals this process writes now, by service.
    public var journals: [String: Journal] { currentJournals() }
    private let currentJournals: @Sendable () -> [String: Journal]
    private let backend: PrometheusMetrics
    private let uptime: Gauge
    private let refresh: @Sendable () -> Void

    /// A report for a process started now, rendering `backend`; `journals` is read each time a
    /// report is made, so that it follows the journals opened and closed since (partition moves),
    /// and `refresh` runs before each exposition.
    public init(
        role: String, journals: @autoclosure @escaping @Sendable () -> [String: Journal], backend: PrometheusMetrics = ProcessMetrics.backend,
        refresh: @escaping @Sendable () -> Void = {}
    ) {
        self.role = role
        started = .now
        currentJournals = journals
        self.backend = backend
        self.refresh = refresh
        uptime = Gauge(label: "lyceum_uptime_seconds", dimensions: [("role", role)], factory: backend)
    }

    /// Seconds since the process started.
    public var uptimeSeconds: Double {
        let elapsed = ContinuousClock.now - started
        return elapsed.seconds
    }

    /// The Prometheus text exposition (format 0.0.4) of the process's metrics.
    public func prometheusText() -> String {
        uptime.record(uptimeSeconds)
        refresh()
        return backend.exposition()
    }

    /// The `mmi.status` answer: a JSON object with the role, uptime, the broker's services
    /// (workers, idle workers, queued requests, whether the broker answers it itself) and this
    /// process's journals.
    public func statusJSON(broker: BrokerSnapshot) -> [UInt8] {
        var services: [JSONValue] = []
        for service in broker.services {
            var object = JSONObject()
            object.append("name", .string(service.name))
            object.append("workers", .integer(service.workers))
            object.append("idle_workers", .integer(service.idleWorkers))
            object.append("queued_requests", .integer(service.queuedRequests))
            object.append("local", .bool(service.isLocal))
            services.append(.object(object))
        }
        var journalList: [JSONValue] = []
        for (name, journal) in journals.sorted(by: { $0.key < $1.key }) {
            var object = JSONObject()
            object.append("service", .string(name))
            object.append("bytes", .integer(Int(journal.size)))
            object.append("last_sequence", .integer(Int(journal.lastSequence)))
            object.append("appends", .integer(Int(journal.statistics.appends)))
            object.append("syncs", .integer(Int(journal.statistics.syncs)))
            journalList.append(.object(object))
        }
        var status = JSONObject()
        status.append("role", .string(role))
        status.append("uptime_seconds", .double((uptimeSeconds * 1000).rounded() / 1000))
        status.append("workers", .integer(broker.workers))
        status.append("queued_requests", .integer(broker.queuedRequests))
        status.append("services", .array(services))
        status.append("journals", .array(journalList))
        return JSONValue.object(status).serialized()
    }
}

