import Telemetry

/// The broker's gauges in the process's metrics (docs/operations.md, "Status and metrics"), pushed by the
/// broker's thread whenever it publishes a new `BrokerSnapshot`. Owned by that one thread.
final class BrokerMetrics {
    private let connectedWorkers = Gauge(label: "lyceum_broker_connected_workers")
    private var services: [String: (workers: Gauge, queued: Gauge)] = [:]
    private let connections = Gauge(label: "lyceum_broker_connections")
    private let unregisteredQueuedRequests = Gauge(label: "lyceum_broker_unregistered_queued_requests")
    private let cuts = (
        limit: Counter(label: "lyceum_broker_connections_cut_total", dimensions: [("reason", "limit")]),
        input: Counter(label: "lyceum_broker_connections_cut_total", dimensions: [("reason", "input")]),
        output: Counter(label: "lyceum_broker_connections_cut_total", dimensions: [("reason", "output")]))
    /// Error replies the broker sent instead of routing a request, by code: made for every code
    /// at once, so that each series exists (at zero) before the first refusal.
    private let rejections = Dictionary(uniqueKeysWithValues: BrokerRejection.Code.allCases.map {
        ($0, Counter(label: "lyceum_broker_rejections_total", dimensions: [("code", $0.rawValue)]))
    })
    /// The cut counts last reported: the snapshot holds totals, the counters take increments.
    private var reportedCuts = BrokerSnapshot.Connections()

    /// Reports `snapshot`; a service no longer in it reports zero workers and zero requests.
    func report(_ snapshot: BrokerSnapshot) {
        connectedWorkers.record(snapshot.workers)
        connections.record(snapshot.connections.open)
        cuts.limit.increment(by: snapshot.connections.refused - reportedCuts.refused)
        cuts.input.increment(by: snapshot.connections.cutForInput - reportedCuts.cutForInput)
        cuts.output.increment(by: snapshot.connections.cutForOutput - reportedCuts.cutForOutput)
        reportedCuts = snapshot.connections
        var absent = Set(services.keys)
        var unregisteredQueued = 0
        for service in snapshot.services {
            // A name no worker ever registered is whatever a client made up: its requests are
            // counted together, so that clients cannot grow the set of labels.
            guard service.isLocal || service.workers > 0 || services[service.name] != nil else {
                unregisteredQueued += service.queuedRequests
                continue
            }
            absent.remove(service.name)
            let gauges = gauges(of: service.name)
            gauges.workers.record(service.workers)
            gauges.queued.record(service.queuedRequests)
        }
        unregisteredQueuedRequests.record(unregisteredQueued)
        for name in absent {
            services[name]?.workers.record(0)
            services[name]?.queued.record(0)
        }
    }

    /// The broker refused a request with `code`.
    func rejected(_ code: BrokerRejection.Code) { rejections[code]?.increment() }

    private func gauges(of service: String) -> (workers: Gauge, queued: Gauge) {
        if let known = services[service] { return known }
        let made = (
            Gauge(label: "lyceum_broker_workers", dimensions: [("service", service)]),
            Gauge(label: "lyceum_broker_queued_requests", dimensions: [("service", service)]))
        services[service] = made
        return made
    }
}
