import LyceumSupport

extension Settings {
    /// Refuses combinations of values that are each valid but cannot work together, naming the
    /// setting and where its value came from.
    /// - Throws: `SettingsError` for the first conflict found.
    public func checkConflicts() throws(SettingsError) {
        func conflict(_ key: SettingKey, _ message: String) -> SettingsError {
            SettingsError(key: key, origin: origins[key] ?? .defaultValue, message: message)
        }
        if queueLimit > queueLimitTotal {
            throw conflict(.queueLimit, "\(queueLimit) exceeds queue-limit-total \(queueLimitTotal)")
        }
        if reconnectInitial > reconnectMaximum {
            throw conflict(.reconnectInitial, "\(reconnectInitial.milliseconds) ms exceeds reconnect-max \(reconnectMaximum.milliseconds) ms")
        }
        if metricsPort != 0, let clash = endpoints.first(where: { $0.hasPrefix("tcp://") && $0.hasSuffix(":\(metricsPort)") }) {
            throw conflict(.metricsPort, "port \(metricsPort) is also the broker endpoint \(clash)")
        }
        if metricsToken != nil, metricsTokenFile != nil {
            throw conflict(.metricsTokenFile, "metrics-token is set too (\(origins[.metricsToken] ?? .defaultValue)): give the token one way")
        }
        if metricsPort != 0, !metricsAddress.hasPrefix("127."), metricsBearerToken == nil {
            throw conflict(.metricsAddress, """
                \(metricsAddress) is not loopback, and /metrics shows every service's traffic: set metrics-token \
                (LYCEUM_METRICS_TOKEN) or metrics-token-file to a secret that scrapers send as Authorization: Bearer
                """)
        }
        if dashboardPort != 0, dashboardPort == metricsPort {
            throw conflict(.dashboardPort, "port \(dashboardPort) is also metrics-port")
        }
        if dashboardPort != 0, !dashboardAddress.hasPrefix("127."), dashboardToken == nil {
            throw conflict(.dashboardAddress, """
                \(dashboardAddress) is not loopback, and the dashboard shows learner ids: set dashboard-token \
                (LYCEUM_DASHBOARD_TOKEN) to a secret the page and the event stream will require
                """)
        }
        if dashboardPort != 0, !publishesEvents {
            throw conflict(.dashboardPort, "the dashboard shows events, and events-endpoint is none")
        }
        if !LeaseRule.holds(ttl: .seconds(leaseTTLSeconds), keepAlivePeriod: leaseKeepAlive, retry: leaseRetry) {
            // Named by the timing from the highest source: the one most likely just changed.
            let timings: [SettingKey] = [.leaseTTL, .leaseKeepAlive, .leaseRetry]
            let key = timings.max { (origins[$0]?.precedence ?? 0) < (origins[$1]?.precedence ?? 0) } ?? .leaseTTL
            throw conflict(key, """
                lease-keep-alive \(leaseKeepAlive.milliseconds) ms + 2 × lease-retry \(leaseRetry.milliseconds) ms exceeds \
                lease-ttl \(leaseTTLSeconds) s: a leader must stop acting before its lease can expire (keep-alive + 2 × retry ≤ ttl)
                """)
        }
        if replicas > 1 {
            if etcdEndpoints.isEmpty {
                throw conflict(.replicas, "\(replicas) replicas need etcd for their leaderships: give etcd-endpoint (LYCEUM_ETCD_ENDPOINT) once per etcd member")
            }
            if replicationEndpoint == nil {
                throw conflict(.replicas, "\(replicas) replicas need replication-endpoint (LYCEUM_REPLICATION_ENDPOINT), where the other replicas reach this one")
            }
            if partitions == 0 {
                throw conflict(.replicas, "\(replicas) replicas are replicas of partitions, and partitions is 0")
            }
        }
    }
}
