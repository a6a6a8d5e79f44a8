/// What a key may do, as its certificate's `role` metadata names it. The broker decides every
/// request's and every connection's rights from the role of the key that authenticated it.
public enum Role: String, Sendable, CaseIterable, Codable {
    /// A Lyceum worker: registers services (`MDPW01`) and publishes events; calls only the
    /// partitioned workers' node services (`lyceum.node.*`), which moves go through; leads and
    /// follows replicated partitions (the replication channel admits no other role).
    case worker
    /// A trusted backend: calls every service for any learner.
    case app
    /// A learner's device or the app acting for listed learners: calls services only for them.
    case learner
    /// A progress dashboard: subscribes to events and asks for snapshots, nothing else.
    case dashboard
    /// An operator: everything `app` may, plus the broker's management services (`mmi.*`,
    /// `lyceum status`) and the event stream.
    case admin

    /// The coarse rights of this role; learner scoping is ``Caller/mayActFor(learner:)``.
    public var permissions: Set<Permission> {
        switch self {
        case .worker: [.registerWorker, .publishEvents, .managePartitions, .replicatePartitions]
        case .app: [.callServices, .callTrustedOperations]
        case .learner: [.callServices]
        case .dashboard: [.subscribeEvents]
        case .admin: [.callServices, .callTrustedOperations, .manage, .managePartitions, .subscribeEvents]
        }
    }
}

/// One coarse right, checked where the action happens (the broker, the event sockets' ZAP
/// domains, the services).
public enum Permission: String, Sendable, CaseIterable {
    /// Send `MDPW01` commands: READY, REPLY, HEARTBEAT, DISCONNECT.
    case registerWorker = "register_worker"
    /// Send `MDPC01` requests to the learning services.
    case callServices = "call_services"
    /// Operations over every learner's data, such as progress `course_stats`.
    case callTrustedOperations = "call_trusted_operations"
    /// The broker's management services: `mmi.*` and `lyceum.*` (`lyceum status`), but for
    /// the node services.
    case manage
    /// The partitioned workers' node services, `lyceum.node.<node>`: describing and moving the
    /// partitions a worker holds.
    case managePartitions = "manage_partitions"
    /// Subscribe to the event stream and ask for snapshots.
    case subscribeEvents = "subscribe_events"
    /// Publish events into the broker's forwarder.
    case publishEvents = "publish_events"
    /// Take part in a replicated partition's replication channel: follow a leader's link, and
    /// be followed as a leader (protocol/replication.md).
    case replicatePartitions = "replicate_partitions"
}
