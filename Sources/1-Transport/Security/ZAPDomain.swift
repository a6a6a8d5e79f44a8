import Access

/// The ZAP domains of Lyceum's CURVE server sockets (`ZMQ_ZAP_DOMAIN`): which socket a
/// handshake is for, and so which permission its key needs.
public enum ZAPDomain: String, Sendable, CaseIterable {
    /// The broker's ROUTER: any authorised key; per-message rules are the broker's.
    case broker = "lyceum.broker"
    /// The event XPUB of `serve` and the forwarder's XPUB output of `broker`.
    case events = "lyceum.events"
    /// The snapshot ROUTER.
    case snapshots = "lyceum.snapshots"
    /// The forwarder's XSUB input, where workers publish.
    case forwarder = "lyceum.forwarder"
    /// A worker's replication link, where the other replicas of the partitions it leads follow.
    case replication = "lyceum.replication"

    /// The permission a key needs to connect, or `nil` when any authorised key may.
    public var requiredPermission: Permission? {
        switch self {
        case .broker: nil
        case .events, .snapshots: .subscribeEvents
        case .forwarder: .publishEvents
        case .replication: .replicatePartitions
        }
    }
}
