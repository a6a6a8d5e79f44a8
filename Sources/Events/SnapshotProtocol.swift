/// The frames of the snapshot exchange (protocol/events.md, "Snapshots"): a DEALER or REQ sends
/// `SNAPSHOT` and a topic prefix; the ROUTER answers `SNAPSHOT` and a JSON body, or `ERROR` and
/// a JSON body naming what was wrong.
public enum SnapshotProtocol {
    /// The command frame of a request and of a successful reply.
    public static let snapshotCommand = "SNAPSHOT"
    /// The command frame of a refused request.
    public static let errorCommand = "ERROR"
    /// The longest prefix accepted, in bytes: the longest a subscription may have.
    public static let maxPrefixBytes = EventTopic.maxSubscriptionBytes
}
