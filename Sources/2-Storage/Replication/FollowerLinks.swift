import Synchronization
import ZeroMQ

/// A process's links to the leaders it follows: one ``FollowerLink`` (one connection, one
/// thread) per leader endpoint, security and format version, shared by every partition followed there, made
/// with the first and stopped with the last (protocol/replication.md, *One link per leader*).
public final class FollowerLinks: Sendable {
    private let context: Context
    private let limits: ReplicationMessage.Limits
    /// The links open now, with how many partitions each carries.
    private let open = Mutex<[Shared]>([])

    private struct Shared {
        let endpoint: String
        let security: SocketSecurity
        let version: Int
        let link: FollowerLink
        var partitions: Int
    }

    /// No link yet: ``follow(_:epoch:leaderEndpoint:security:)`` opens them.
    public init(context: Context, limits: ReplicationMessage.Limits = ReplicationMessage.Limits()) {
        self.context = context
        self.limits = limits
    }

    /// Follows the leader of `epoch` at `leaderEndpoint` with `replica`, over the link to that
    /// leader speaking format `version` (opened now if this is its first partition).
    /// - Throws: the socket's error when a new link cannot be opened.
    public func follow(
        _ replica: FollowerReplica, epoch: Int64, leaderEndpoint: String, security: SocketSecurity, version: Int = ReplicationFormat.oldest
    ) throws -> ReplicationFollower {
        let link = try open.withLock { open throws -> FollowerLink in
            if let index = open.firstIndex(where: { $0.endpoint == leaderEndpoint && $0.security == security && $0.version == version }) {
                open[index].partitions += 1
                return open[index].link
            }
            let link = try FollowerLink(context: context, endpoint: leaderEndpoint, security: security, limits: limits, version: version)
            open.append(Shared(endpoint: leaderEndpoint, security: security, version: version, link: link, partitions: 1))
            return link
        }
        return ReplicationFollower(entry: FollowerLink.Entry(replica: replica, epoch: epoch), link: link, release: { [self] in release(link) })
    }

    /// How many links are open (one per leader followed).
    public var count: Int { open.withLock { $0.count } }

    /// One partition fewer on `link`: the last one stops it.
    private func release(_ link: FollowerLink) {
        let last = open.withLock { open -> Bool in
            guard let index = open.firstIndex(where: { $0.link === link }) else { return false }
            open[index].partitions -= 1
            guard open[index].partitions == 0 else { return false }
            open.remove(at: index)
            return true
        }
        if last { link.stop() }
    }
}
