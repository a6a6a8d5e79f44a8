import LyceumSupport

extension SettingKey {
    /// Replicated partitions' (`worker`; protocol/replication.md).
    static let replicationKeys = [replicas, etcdEndpoint, replicationEndpoint, leaseTTL, leaseKeepAlive, leaseRetry, leaderBalanceInterval]

    /// Replica set sizes: 1 (unreplicated) up to 7.
    static let replicaRange = 1...7

    /// `Settings.replicas`.
    public static let replicas = one(
        "replicas", \.replicas, .integer(replicaRange), commands: [.worker], placeholder: "N",
        help: "replicas of each partition (\(replicaRange.lowerBound)-\(replicaRange.upperBound)); more than 1 needs --etcd-endpoint")
    /// `Settings.etcdEndpoints`: checked as the etcd client reads them (`HostPort`).
    public static let etcdEndpoint = list(
        "etcd-endpoint", \.etcdEndpoints,
        SettingType(
            expecting: "an etcd member's client URL such as http://127.0.0.1:2379",
            { text in (try? HostPort(url: text, scheme: "http")) == nil ? nil : text }, format: { $0 }),
        none: "no etcd", commands: [.worker], placeholder: "URL", help: "an etcd member's client URL (http://HOST:PORT) holding the partitions' leaderships")
    /// `Settings.replicationEndpoint`.
    public static let replicationEndpoint = optional(
        "replication-endpoint", \.replicationEndpoint,
        SettingType(expecting: "an endpoint such as tcp://10.0.0.11:5570", { Settings.replicationPort(of: $0) == nil ? nil : $0 }, format: { $0 }),
        none: "no replication", commands: [.worker], placeholder: "EP",
        help: "tcp://ADDRESS:PORT other replicas reach this worker on: one socket for every partition it leads")
    /// `Settings.leaseTTLSeconds`.
    public static let leaseTTL = one(
        "lease-ttl", \.leaseTTLSeconds, .integer(2...3600, "seconds"), commands: [.worker], placeholder: "S",
        help: "a leader lease's time to live in seconds (lease-keep-alive + 2 × lease-retry ≤ it)")
    /// `Settings.leaseKeepAlive`.
    public static let leaseKeepAlive = one(
        "lease-keep-alive", \.leaseKeepAlive, .milliseconds(1...3_600_000), commands: [.worker], placeholder: "MS",
        help: "the period of a leader lease's renewals")
    /// `Settings.leaseRetry`.
    public static let leaseRetry = one(
        "lease-retry", \.leaseRetry, .milliseconds(1...3_600_000), commands: [.worker], placeholder: "MS",
        help: "how long a failing lease renewal is retried before the leader steps down")
    /// `Settings.leaderBalanceInterval`.
    public static let leaderBalanceInterval = one(
        "leader-balance-interval", \.leaderBalanceInterval, .milliseconds(0...3_600_000), commands: [.worker], placeholder: "MS",
        help: "how often a worker hands a leadership over when it leads more than its share (0: never)")
}

extension Settings {
    /// The port of a replication endpoint `tcp://ADDRESS:PORT`; `nil` when `text` is not one.
    public static func replicationPort(of text: String) -> Int? {
        guard text.hasPrefix("tcp://"), let colon = text.lastIndex(of: ":"), colon > text.index(text.startIndex, offsetBy: 6),
            let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port)
        else { return nil }
        return port
    }
}
