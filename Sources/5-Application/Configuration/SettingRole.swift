/// What a setting is for, by which the declarations are grouped (`Declarations/`), `lyceum
/// config` lists them, and docs/operations.md tables them.
public enum SettingRole: String, CaseIterable, Sendable {
    /// Logs and Majordomo heartbeats of the long-running processes.
    case process
    /// The metrics port (`/metrics`, `/healthz`, `/readyz`).
    case metrics
    /// The broker's endpoints and bounds.
    case broker
    /// Where events are published, forwarded and snapshotted.
    case events
    /// The browser dashboard.
    case dashboard
    /// Where the learning services keep their data and how much a request may get or store.
    case services
    /// A worker process: its services, sessions and reconnections.
    case worker
    /// Partitioned clusters.
    case partitions
    /// Replicated partitions.
    case replication
    /// CURVE keys and protected mode.
    case security
    /// Calling brokers: which, and how long to wait.
    case client

    /// The heading of the role's table in docs/operations.md.
    public var title: String {
        switch self {
        case .process: "Logs and heartbeats"
        case .metrics: "The metrics port"
        case .broker: "The broker"
        case .events: "Events"
        case .dashboard: "The browser dashboard"
        case .services: "The learning services' data and limits"
        case .worker: "Worker processes"
        case .partitions: "Partitions"
        case .replication: "Replicated partitions"
        case .security: "Security"
        case .client: "Calling brokers"
        }
    }

    /// The role's settings, in the order they are listed.
    public var keys: [SettingKey] {
        switch self {
        case .process: SettingKey.processKeys
        case .metrics: SettingKey.metricsKeys
        case .broker: SettingKey.brokerKeys
        case .events: SettingKey.eventsKeys
        case .dashboard: SettingKey.dashboardKeys
        case .services: SettingKey.servicesKeys
        case .worker: SettingKey.workerKeys
        case .partitions: SettingKey.partitionsKeys
        case .replication: SettingKey.replicationKeys
        case .security: SettingKey.securityKeys
        case .client: SettingKey.clientKeys
        }
    }
}
