/// The frames of the snapshot exchange (protocol/events.md, "Snapshots"): a DEALER or REQ sends
/// `SNAPSHOT`, a topic prefix and optionally a cursor; the ROUTER answers `SNAPSHOT` and one page
/// of the snapshot as a JSON body, or `ERROR` and a JSON body naming what was wrong.
public enum SnapshotProtocol {
    /// The command frame of a request and of a successful reply.
    public static let snapshotCommand = "SNAPSHOT"
    /// The command frame of a refused request.
    public static let errorCommand = "ERROR"
    /// The longest prefix accepted, in bytes: the longest a subscription may have. A cursor (a
    /// topic, at most 202 bytes with Lyceum's id limits) has the same bound.
    public static let maxPrefixBytes = EventTopic.maxSubscriptionBytes
    /// `ZMQ_MAXMSGSIZE` of the snapshot ROUTER: every frame of a request fits (a prefix or cursor
    /// of ``maxPrefixBytes``, the command); libzmq drops the connection of a peer sending more.
    public static let maxRequestFrameBytes = Int64(maxPrefixBytes + 64)
    /// Replies that may wait unread for one peer (the ROUTER's `ZMQ_SNDHWM`). A subscriber asks
    /// for one page at a time; requests from a peer that leaves this many unread are dropped
    /// unanswered (and cost no page), so a peer that never reads holds at most this many pages.
    public static let maxUnreadRepliesPerPeer: Int32 = 2
    /// Requests that may wait unanswered from one peer (the ROUTER's `ZMQ_RCVHWM`); beyond it
    /// libzmq stops reading the peer's connection until the publisher thread catches up.
    public static let maxQueuedRequestsPerPeer: Int32 = 16
    /// Requests the publisher thread answers before it sends queued events again, so that a
    /// flood of snapshot requests delays events by a bounded amount of work.
    public static let maxRequestsPerPass = 64
    /// The default budget of one reply body, in bytes (the `snapshot-page-bytes` setting).
    public static let defaultPageBytes = 64 * 1024
    /// The budgets a publisher accepts: at least room for a page header and a few entries.
    public static let pageBytesRange = 4096...(64 << 20)
}
