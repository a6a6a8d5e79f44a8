import Coordination
import Foundation
import LyceumLogging
import LyceumSupport
import Replication
import Synchronization
import ZeroMQ

/// One replica of a replicated partition on this node: its candidacy for the partition's leader
/// key, and the replication link its role needs (protocol/replication.md). Leading, it runs a
/// ``ReplicationLeader`` on the process's ``ReplicationRouter`` and reports it once recovered (the partition's service
/// may then be registered, writing through `ReplicatedChangeLog`); following, it runs a
/// ``ReplicationFollower`` to the leader named by the leader key (a ``LeaderAddress``: over
/// CURVE, only to a leader whose key ``ReplicationSecurity`` trusts); otherwise neither. Every
/// change stops the previous link first, so that no two run at once.
public final class PartitionReplica: @unchecked Sendable {
    /// What the replica does now.
    public enum Role: Sendable {
        /// Neither leads nor follows (no lease, etcd unreachable, or stopped).
        case candidate
        /// Follows the leadership.
        case following(Leadership)
        /// Leads and has recovered: writes go through this link.
        case leading(ReplicationLeader)
    }

    /// The partition (`books.p7`).
    public let partition: String
    /// This node's name, replication endpoint and (over CURVE) public key, as the leader key
    /// holds them.
    public let candidate: LeaderAddress
    /// This node's name.
    public var node: String { candidate.node }
    private let router: ReplicationRouter
    private let followerLinks: FollowerLinks
    /// Held through each change of role and each report of one, so that a leadership's report
    /// (``recovered(_:)``, on a thread of its own) never follows the report of its end. A
    /// `Monitor` for its lock that never spins: a change stops and starts links, which takes long.
    private let transitions = Monitor(())
    private let store: any ReplicaStore
    private let history: EpochHistory
    private let replicas: Int
    private let security: ReplicationSecurity
    /// Where the leader keys are, and each node's formats (``NodeFormats``).
    private let etcd: EtcdClient
    private let onChange: @Sendable (Role) -> Void
    private let onCommitted: @Sendable (Duration) -> Void
    private let logger = Logger(component: "replica")
    private let links = Mutex(Links())

    /// The links running now, and what the replica knows of them.
    private struct Links {
        var leader: ReplicationLeader?
        var follower: ReplicationFollower?
        /// The node followed, while following.
        var followed: String?
        /// The epoch of the last link, led or followed (0 before any).
        var lastEpoch: Int64 = 0
        /// Set by ``stop(resign:)``: no new link starts.
        var stopping = false
        var candidacy: Candidacy?
    }

    /// Starts campaigning for `partition`'s leader key in `election`.
    /// - Parameters:
    ///   - endpoint: where the other replicas reach `router` (`tcp://ADDRESS:PORT`: it goes into
    ///     the leader key).
    ///   - router: the process's replication ROUTER, where this replica leads.
    ///   - links: the process's links to leaders, over which this replica follows.
    ///   - replicas: the replica set's size (R).
    ///   - security: the links' (CURVE, or plaintext).
    ///   - onChange: told each new role, one at a time, on the candidacy's thread or another.
    ///   - onCommitted: told how long each write acknowledged while leading waited for its majority.
    public init(
        partition: String, node: String, endpoint: String, router: ReplicationRouter, links: FollowerLinks, store: any ReplicaStore, history: EpochHistory, replicas: Int,
        election: LeaderElection, timing: LeaseTiming, security: ReplicationSecurity = .plaintext,
        onChange: @escaping @Sendable (Role) -> Void = { _ in }, onCommitted: @escaping @Sendable (Duration) -> Void = { _ in }
    ) {
        self.partition = partition
        candidate = LeaderAddress(node: node, endpoint: endpoint, publicKey: security.publicKey)
        self.router = router
        followerLinks = links
        self.store = store
        self.history = history
        self.replicas = replicas
        self.security = security
        etcd = election.client
        self.onChange = onChange
        self.onCommitted = onCommitted
        let candidacy = Candidacy(election: election, name: candidate.description, timing: timing) { [weak self] state in self?.became(state) }
        self.links.withLock { $0.candidacy = candidacy }
    }

    /// The leader link while this replica leads and has recovered.
    public var servingLeader: ReplicationLeader? {
        links.withLock { $0.leader }.flatMap { $0.isRecovered ? $0 : nil }
    }

    /// Hands the leadership over to the replica of node `successor`
    /// (``Coordination/Candidacy/handOff(to:)``, epoch-checked): this replica stops leading once
    /// its watch sees the key go (its service removed, the writes waiting for a majority failed),
    /// and no replica but `successor`'s takes the key until `successor` leads or its name
    /// expires. The successor recovers as any new leader does: it holds every acknowledged
    /// write before it serves, however far behind it was.
    /// - Returns: whether it did (false: this replica does not lead now).
    public func handOff(to successor: String) throws -> Bool {
        guard servingLeader != nil, let candidacy = links.withLock({ $0.candidacy }) else { return false }
        return try candidacy.handOff(to: successor)
    }

    /// Whether this replica is caught up: leading and recovered, or following a leader heard
    /// within ``LeadershipBalance/heardWithin`` whose last announced commit it lacks at most
    /// ``LeadershipBalance/caughtUpRecords`` of (the measure a leader applies to its followers
    /// before handing one a leadership). Recovering, or a candidate, it is not.
    public var isCaughtUp: Bool {
        let (leader, follower) = links.withLock { ($0.leader, $0.follower) }
        if let leader { return leader.isRecovered }
        return follower?.isCaughtUp(within: LeadershipBalance.caughtUpRecords, heardWithin: LeadershipBalance.heardWithin) ?? false
    }

    /// What the replica does now, and how far behind its followers are when it leads.
    public var status: ReplicaStatus {
        let (leader, follower, followed, epoch) = links.withLock { ($0.leader, $0.follower, $0.followed, $0.lastEpoch) }
        let last = store.lastSequence
        if let leader {
            return ReplicaStatus(
                partition: partition, role: leader.isRecovered ? .leading : .recovering, epoch: leader.epoch, lastSequence: last,
                leader: node, followers: leader.followers)
        }
        if let follower, let followed {
            let progress = follower.progress
            return ReplicaStatus(
                partition: partition, role: .following, epoch: progress.epoch, lastSequence: progress.position.sequence,
                leader: followed, followers: [])
        }
        return ReplicaStatus(partition: partition, role: .candidate, epoch: epoch, lastSequence: last, leader: nil, followers: [])
    }

    /// Stops: with `resign`, hands the leadership over at once (protocol/replication.md,
    /// *Graceful stop*); without, as a killed process would (the lease expires). The link stops
    /// first, so that the writes still waiting for a majority are answered or failed before
    /// the leader key goes.
    public func stop(resign: Bool) {
        let candidacy = links.withLock { links in
            links.stopping = true
            defer { links.candidacy = nil }
            return links.candidacy
        }
        became(.candidate)
        candidacy?.stop(resign: resign)
    }

    private func became(_ state: LeadershipState) {
        transitions.withLock { _ in change(to: state) }
    }

    /// Stops the running link and starts the one `state` needs; under `transitions`.
    private func change(to state: LeadershipState) {
        let (oldLeader, oldFollower, candidacy, stopping) = links.withLock { links in
            defer { links.leader = nil; links.follower = nil; links.followed = nil }
            return (links.leader, links.follower, links.candidacy, links.stopping)
        }
        // The link first: stopping a leader's fails the writes still waiting for a majority, so
        // that the service's removal (told next) does not wait for replies that cannot come.
        oldLeader?.stop()
        oldFollower?.stop()
        if oldLeader != nil || oldFollower != nil { onChange(.candidate) }
        guard !stopping else { return }
        do {
            switch state {
            case .leader(let epoch):
                // Reported off the router's thread: serving the partition replays its state, and
                // every partition the router serves would wait meanwhile.
                let link = ReplicationLeader(
                    partition: partition, epoch: epoch, store: store, history: history, replicas: replicas, router: router,
                    mayAcknowledge: { candidacy?.mayAcknowledge(epoch: epoch) == true },
                    onRecovered: { [weak self] in let replica = self; Thread.detachNewThread { replica?.recovered(epoch) } }, onCommitted: onCommitted)
                links.withLock { $0.leader = link; $0.lastEpoch = epoch }
            case .follower(let leadership):
                let leader: LeaderAddress, linkSecurity: SocketSecurity
                do {
                    leader = try LeaderAddress(parsing: leadership.leader)
                    linkSecurity = try security.following(leader)
                } catch {
                    // Idle until the key changes: never a connection to a key not known here.
                    logger.error("not following: the leader key is not trusted", ["partition": partition, "epoch": String(leadership.epoch), "error": error.description])
                    return
                }
                // The newest format both read: the oldest unless the leader published more.
                let version = ReplicationFormat.spoken(toPeerReadingUpTo: NodeFormats.newestReplicationFormat(of: leader.node, in: etcd))
                let link = try followerLinks.follow(
                    FollowerReplica(partition: partition, store: store, history: history, node: node), epoch: leadership.epoch,
                    leaderEndpoint: leader.endpoint, security: linkSecurity, version: version)
                links.withLock { $0.follower = link; $0.followed = leader.node; $0.lastEpoch = leadership.epoch }
                onChange(.following(leadership))
            case .candidate:
                break
            }
        } catch {
            logger.error("could not start the replication link", ["partition": partition, "state": "\(state)", "error": "\(error)"])
        }
    }

    private func recovered(_ epoch: Int64) {
        transitions.withLock { _ in
            guard let link = links.withLock({ $0.leader }), link.epoch == epoch, link.isRecovered else { return }
            onChange(.leading(link))
        }
    }
}
