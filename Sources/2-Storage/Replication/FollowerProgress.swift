/// How far one follower is behind its leader, as the leader sees it: what `lyceum status` and
/// the lag metrics report (docs/operations.md).
public struct FollowerProgress: Sendable, Equatable {
    /// The follower's node, as it said in `follow` (its connection's identity in hex if it did not).
    public let node: String
    /// The last sequence it acknowledged durable.
    public let durable: UInt64
    /// Records of the leader's journal after `durable`.
    public let lagRecords: UInt64
    /// Bytes of those records in the leader's journal: shipped and not acknowledged, or not
    /// shipped yet.
    public let lagBytes: UInt64
    /// Time since the leader last heard from it (its `follow` or its last `ack`).
    public let silence: Duration

    /// The progress of the follower on `node`.
    public init(node: String, durable: UInt64, lagRecords: UInt64, lagBytes: UInt64, silence: Duration) {
        self.node = node
        self.durable = durable
        self.lagRecords = lagRecords
        self.lagBytes = lagBytes
        self.silence = silence
    }
}
