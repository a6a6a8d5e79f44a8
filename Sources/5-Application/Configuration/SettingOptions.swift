import CommandSyntax

extension SettingKey {
    /// The command-line option of this setting: its value is checked by `Settings.set(_:to:from:)`,
    /// as from every other source, and its default is `Settings()`'s.
    public var option: Option {
        let (placeholder, help) = helpLine
        // A switch: given, it sets the value true (CommandArguments); false is the default.
        if isSwitch { return Option(rawValue, .none, help: help + "\nalso \(environmentVariable)=true") }
        return Option(
            rawValue, .text(placeholder: placeholder), help: help + "\nalso \(environmentVariable)",
            default: Settings().values(of: self).joined(separator: ", "), repeatable: isRepeatable)
    }

    /// The options of `keys`, in `SettingKey.allCases` order, so every command lists them alike.
    public static func options(for keys: Set<SettingKey>) -> [Option] {
        allCases.filter(keys.contains).map(\.option)
    }

    /// The value's placeholder and one line for `--help`; docs/operations.md has the full table.
    private var helpLine: (placeholder: String, help: String) {
        switch self {
        case .endpoint: ("EP", "an endpoint the broker binds for clients")
        case .broker: ("EP", "a broker: worker registers with every one; call and status try them in order")
        case .data: ("DIR", "the data directory; each stateful service journals in DIR/<service>")
        case .catalog: ("PATH", "a catalog file or directory (none: the sample catalog)")
        case .service: ("NAME", "a service to serve (none given: every service)")
        case .sessions: ("N", "worker sessions per service (\(Settings.sessionRange.lowerBound)-\(Settings.sessionRange.upperBound))")
        case .durability: ("POLICY", "when a write is durable: always, none, interval or interval:MS")
        case .timeout: ("MS", "how long to wait for a reply")
        case .logLevel: ("LEVEL", "the least severe level logged")
        case .logFormat: ("FORMAT", "auto, human, logfmt or json")
        case .metricsPort: ("PORT", "the port serving GET /metrics, /healthz and /readyz (0: none)")
        case .heartbeatInterval: ("MS", "Majordomo heartbeat interval")
        case .heartbeatLiveness: ("N", "heartbeat intervals of silence before a peer is gone")
        case .mdp: ("VERSION", "the Majordomo spoken to brokers: 7 (7/MDP) or 18 (18/MDP, majortomo's framing)")
        case .reconnectInitial: ("MS", "a worker's first wait before reconnecting; doubled up to --reconnect-max")
        case .reconnectMaximum: ("MS", "the longest wait between a worker's reconnection attempts")
        case .queueLimit: ("N", "requests queued per service before queue-full")
        case .queueLimitTotal: ("N", "requests queued for all services before broker-overloaded")
        case .highWaterMark: ("N", "ZeroMQ high-water mark of the broker's socket for replies, per peer")
        case .receiveHighWaterMark: ("N", "messages from one peer the broker's socket holds unread")
        case .eventsEndpoint: ("EP", "where events are published (none: no events)")
        case .snapshotEndpoint: ("EP", "where serve answers event snapshot requests; a worker: loopback, any port, unless given")
        case .forwarderEndpoint: ("EP", "where the broker's forwarder takes workers' events in; a worker publishes into every one")
        case .logRateLimit: ("N", "log lines a second per message below critical (0: no limit)")
        case .metricsConnections: ("N", "metrics connections kept open at once")
        case .metricsTimeout: ("MS", "time a metrics connection has to be answered")
        case .metricsAddress: ("IPV4", "the address the metrics port binds; not loopback needs --metrics-token(-file)")
        case .metricsToken: ("TOKEN", "a bearer token GET /metrics requires (Authorization: Bearer)")
        case .metricsTokenFile: ("FILE", "a file (0600) whose first line is the metrics token")
        case .snapshotPageBytes: ("BYTES", "the most bytes of one event snapshot page")
        case .maxReplyBytes: ("BYTES", "the most bytes of items one list or search page holds")
        case .maxBooksPerLearner: ("N", "the most books one learner's library holds (limit_exceeded past it)")
        case .maxLibraryBytes: ("BYTES", "the most bytes of titles, authors and reviews one learner's library holds")
        case .maxBatch: ("MS", "the longest the broker handles other messages before sending replies owed")
        case .unknownServiceTimeout: ("MS", "how long a request waits for a service or partition with no worker")
        case .backupIdleLimit: ("MS", "how long a backup goes without a request from its client before its files are removed")
        case .maxConnections: ("N", "connections the broker holds at once (lowered to the descriptor limit - 256)")
        case .maxInputBytes: ("BYTES", "bytes a connection may have received that the broker has not taken as messages")
        case .maxOutputBytes: ("BYTES", "bytes sent to a peer that it has not read before it is cut")
        case .dashboardPort: ("PORT", "the port serving the browser dashboard and its event stream (0: none)")
        case .dashboardAddress: ("IPV4", "the address the dashboard binds; not loopback needs --dashboard-token")
        case .dashboardToken: ("TOKEN", "a bearer token the dashboard requires (Authorization: Bearer, or ?token=)")
        case .curveSecretKey: ("FILE", "this process's secret certificate (NAME_secret, 0600): CURVE on every socket")
        case .curveServerKey: ("FILE", "the broker's public certificate, to connect to it with CURVE")
        case .authorizedKeys: ("DIR", "the directory of authorised public certificates (reloaded on SIGHUP)")
        case .partitions: ("N", "the cluster's partition count for books and progress (0: unpartitioned)")
        case .node: ("NAME", "this worker's node name; its node service is lyceum.node.NAME")
        case .insecure: ("", "allow binding a non-loopback endpoint without CURVE")
        case .join: ("", "a partitioned worker may start holding no partition, to receive its share by moves")
        case .replicas: ("N", "replicas of each partition (\(Settings.replicaRange.lowerBound)-\(Settings.replicaRange.upperBound)); more than 1 needs --etcd-endpoint")
        case .etcdEndpoint: ("URL", "an etcd member's client URL (http://HOST:PORT) holding the partitions' leaderships")
        case .replicationEndpoint: ("EP", "tcp://ADDRESS:PORT other replicas reach this worker on: one socket for every partition it leads")
        case .leaseTTL: ("S", "a leader lease's time to live in seconds (lease-keep-alive + 2 × lease-retry ≤ it)")
        case .leaseKeepAlive: ("MS", "the period of a leader lease's renewals")
        case .leaseRetry: ("MS", "how long a failing lease renewal is retried before the leader steps down")
        }
    }
}
