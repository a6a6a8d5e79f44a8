import JSON
import Events
import Journal
import LyceumSupport
import Majordomo

/// What one Lyceum process can say about itself: how long it has run, its requests, its
/// journals and, when it runs a broker, the broker's services and workers. Rendered as the
/// Prometheus text exposition for `GET /metrics` and as the JSON answer of `mmi.status`.
public struct ProcessReport: Sendable {
    /// The management service `lyceum status` asks.
    public static let statusService = "mmi.status"

    /// The process's role: `serve`, `broker` or `worker`.
    public let role: String
    /// When the process started.
    public let started: ContinuousClock.Instant
    /// The requests this process's workers handled.
    public let metrics: RequestMetrics
    /// The journals this process writes, by service.
    public let journals: [ServiceName: Journal]

    /// A report for a process started now.
    public init(role: String, metrics: RequestMetrics, journals: [ServiceName: Journal]) {
        self.role = role
        started = .now
        self.metrics = metrics
        self.journals = journals
    }

    /// Seconds since the process started.
    public var uptimeSeconds: Double {
        let elapsed = ContinuousClock.now - started
        return elapsed.seconds
    }

    /// The Prometheus text exposition (format 0.0.4) of everything this process knows.
    /// - Parameter events: the counts of this process's event publisher, when it has one.
    public func prometheusText(broker: BrokerSnapshot?, events: EventPublisher.Counters? = nil) -> String {
        var text = PrometheusText()
        text.family("lyceum_uptime_seconds", "gauge", "Seconds since the process started.")
        text.sample("lyceum_uptime_seconds", [("role", role)], uptimeSeconds)

        let requests = metrics.requests.sorted { $0.key < $1.key }
        text.family("lyceum_requests_total", "counter", "Requests handled by this process's workers, by service and operation.")
        for (key, latencies) in requests {
            text.sample("lyceum_requests_total", [("service", key.service), ("op", key.label)], Double(latencies.count))
        }
        text.family("lyceum_request_duration_seconds", "histogram", "Time to answer a request in a worker, by service and operation.")
        for (key, latencies) in requests {
            let labels = [("service", key.service), ("op", key.label)]
            var cumulative: UInt64 = 0
            for (bound, count) in zip(RequestMetrics.latencyBuckets, latencies.buckets) {
                cumulative += count
                text.sample("lyceum_request_duration_seconds_bucket", labels + [("le", PrometheusText.number(bound))], Double(cumulative))
            }
            text.sample("lyceum_request_duration_seconds_bucket", labels + [("le", "+Inf")], Double(latencies.count))
            text.sample("lyceum_request_duration_seconds_sum", labels, latencies.sum)
            text.sample("lyceum_request_duration_seconds_count", labels, Double(latencies.count))
        }
        text.family("lyceum_request_errors_total", "counter", "Error replies, by service and error code.")
        for (key, count) in metrics.errors.sorted(by: { $0.key < $1.key }) {
            text.sample("lyceum_request_errors_total", [("service", key.service), ("code", key.label)], Double(count))
        }

        let journals = journals.sorted { $0.key.rawValue < $1.key.rawValue }
        let families: [(name: String, type: String, help: String, value: (Journal) -> UInt64)] = [
            ("lyceum_journal_appends_total", "counter", "Records appended to the journal since start.", { $0.statistics.appends }),
            ("lyceum_journal_syncs_total", "counter", "fdatasync calls made by the journal since start.", { $0.statistics.syncs }),
            ("lyceum_journal_bytes", "gauge", "Size of the journal file in bytes.", { $0.size }),
            ("lyceum_journal_last_sequence", "gauge", "Sequence number of the journal's last record.", { $0.lastSequence }),
        ]
        for family in families {
            text.family(family.name, family.type, family.help)
            for (name, journal) in journals { text.sample(family.name, [("service", name.rawValue)], Double(family.value(journal))) }
        }

        if let events {
            text.family("lyceum_events_published_total", "counter", "Progress events given a sequence number by this process's publisher.")
            text.sample("lyceum_events_published_total", [], Double(events.published))
            text.family("lyceum_events_dropped_total", "counter", "Of those, events dropped because the publisher's queue was full.")
            text.sample("lyceum_events_dropped_total", [], Double(events.dropped))
            text.family("lyceum_event_snapshots_total", "counter", "Snapshot requests (pages) answered by this process's publisher.")
            text.sample("lyceum_event_snapshots_total", [], Double(events.snapshots))
            text.family(
                "lyceum_event_snapshots_dropped_total", "counter",
                "Snapshot requests dropped unanswered because the peer left its earlier replies unread, or was gone.")
            text.sample("lyceum_event_snapshots_dropped_total", [], Double(events.snapshotsDropped))
        }

        if let broker {
            text.family("lyceum_broker_workers", "gauge", "Workers registered with the broker, by service.")
            for service in broker.services { text.sample("lyceum_broker_workers", [("service", service.name)], Double(service.workers)) }
            text.family("lyceum_broker_queued_requests", "gauge", "Requests queued in the broker for a worker, by service.")
            for service in broker.services {
                text.sample("lyceum_broker_queued_requests", [("service", service.name)], Double(service.queuedRequests))
            }
            text.family("lyceum_broker_connected_workers", "gauge", "Workers registered with the broker, all services.")
            text.sample("lyceum_broker_connected_workers", [], Double(broker.workers))
        }
        return text.output
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
        for (name, journal) in journals.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            var object = JSONObject()
            object.append("service", .string(name.rawValue))
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

/// Builds Prometheus text exposition: `# HELP`/`# TYPE` lines, then samples with escaped labels.
struct PrometheusText {
    private(set) var output = ""

    mutating func family(_ name: String, _ type: String, _ help: String) {
        output += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        output += name
        if !labels.isEmpty {
            output += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",") + "}"
        }
        output += " " + Self.number(value) + "\n"
    }

    /// Integers without a fraction, other values as Swift prints them.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// A label value with `\`, `"` and newlines escaped, as the format requires.
    static func escaped(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
