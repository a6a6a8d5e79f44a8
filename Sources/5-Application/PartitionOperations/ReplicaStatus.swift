import JSON
import LyceumSupport
import Partitions
import Replication

/// What one replica of a replicated partition does now, as its node reports it in `describe`
/// (and so in `lyceum status`) and in its metrics: its role, epoch and log end, the leader it
/// follows and, while it leads, how far behind each follower is.
public struct ReplicaStatus: Sendable {
    /// The replica's role (protocol/replication.md, *States of a replica*).
    public enum Role: String, Sendable {
        /// Leads and has recovered: serves the partition.
        case leading
        /// Elected, recovering what a majority has; not serving yet.
        case recovering
        /// Follows a leader.
        case following
        /// Neither: no lease, etcd unreachable, or between two leaderships.
        case candidate
    }

    /// The partition (`books.p7`).
    public let partition: String
    /// Its role.
    public let role: Role
    /// The epoch it leads in; following, the highest epoch it adopted; otherwise the epoch of
    /// its last leadership followed or led (0 before any).
    public let epoch: Int64
    /// The sequence of the last record of its journal.
    public let lastSequence: UInt64
    /// The node that leads: this one while leading or recovering, the leader key's while following.
    public let leader: String?
    /// While leading, the followers it has heard from.
    public let followers: [FollowerProgress]

    /// A replica's status.
    public init(partition: String, role: Role, epoch: Int64, lastSequence: UInt64, leader: String?, followers: [FollowerProgress]) {
        self.partition = partition
        self.role = role
        self.epoch = epoch
        self.lastSequence = lastSequence
        self.leader = leader
        self.followers = followers
    }

    /// `{"service", "partition", "role", "epoch", "last_seq", "leader" (when known),
    /// "followers": [{"node", "durable_seq", "lag_records", "lag_bytes", "silent_ms"}]}`.
    public var json: JSONObject {
        var object = JSONObject()
        if let name = PartitionName.parse(service: partition) {
            object.append("service", .string(name.service))
            object.append("partition", .integer(name.partition))
        }
        object.append("role", .string(role.rawValue))
        object.append("epoch", .integer(Int(epoch)))
        object.append("last_seq", .integer(Int(lastSequence)))
        if let leader { object.append("leader", .string(leader)) }
        object.append("followers", .array(followers.map { follower in
            [
                "node": .string(follower.node), "durable_seq": .integer(Int(follower.durable)),
                "lag_records": .integer(Int(follower.lagRecords)), "lag_bytes": .integer(Int(follower.lagBytes)),
                "silent_ms": .integer(Int(follower.silence.milliseconds)),
            ]
        }))
        return object
    }
}
