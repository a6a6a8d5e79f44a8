import Synchronization
import ZeroMQ

/// A follower's end of the replication channel for one partition: its ``FollowerReplica`` fed by
/// a link to the leader (a ``FollowerLink``: one DEALER and one thread per leader node, shared by
/// every partition the process follows there, through ``FollowerLinks``). It says `follow`
/// (again whenever the leader has been silent about the partition for a second), hands every
/// message to the replica, sends the answers back, and acknowledges appends once durable.
public final class ReplicationFollower: Sendable {
    /// The replica it feeds.
    public var replica: FollowerReplica { entry.replica }
    private let entry: FollowerLink.Entry
    private let link: FollowerLink
    /// What stops the link when this was its last partition: the registry's release, or the
    /// link's own stop when the link is this follower's alone.
    private let release: @Sendable () -> Void
    private let stopped = Atomic<Bool>(false)

    /// Follows the leader of `epoch` at `leaderEndpoint` on a link of its own, stopped with it
    /// (a process following one partition, and the tests), speaking format `version`
    /// (``ReplicationFormat``; see ``FollowerLink``).
    /// - Throws: the socket's error.
    public convenience init(replica: FollowerReplica, epoch: Int64, context: Context, leaderEndpoint: String, security: SocketSecurity = .plaintext,
                            limits: ReplicationMessage.Limits = ReplicationMessage.Limits(), version: Int = ReplicationFormat.oldest) throws {
        let link = try FollowerLink(context: context, endpoint: leaderEndpoint, security: security, limits: limits, version: version)
        self.init(entry: FollowerLink.Entry(replica: replica, epoch: epoch), link: link, release: { link.stop() })
    }

    init(entry: FollowerLink.Entry, link: FollowerLink, release: @escaping @Sendable () -> Void) {
        self.entry = entry
        self.link = link
        self.release = release
        link.attach(entry)
    }

    /// The highest epoch this follower adopted and where its log ends, as of its last message.
    public var progress: (epoch: Int64, position: LogPosition) { entry.published.withLock { $0 } }

    /// Whether the leader was heard within `heardWithin` and this replica's log ends at most
    /// `records` before the commit the leader last announced (heartbeats announce it every
    /// 500 ms): false before the leader's first `append`.
    public func isCaughtUp(within records: UInt64, heardWithin: Duration) -> Bool {
        guard let (commit, heard) = entry.announced.withLock({ $0 }), ContinuousClock.now - heard < heardWithin else { return false }
        return progress.position.sequence + records >= commit
    }

    /// Stops following (the journal stays open: its owner closes it); once this returns the link
    /// never touches the replica again.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        link.detach(entry)
        release()
    }
}
