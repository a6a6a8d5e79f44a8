import Coordination
import Foundation
import LyceumLogging
import LyceumSupport
import Partitions
import Replication

/// A worker's own share of its replicated partitions' leaderships (protocol/replication.md,
/// *Balanced leaderships*). Leaderships go to whoever campaigns first, so after a start or a
/// host's return one node may lead nearly every partition and take nearly every write. Every
/// `interval` (give or take a quarter, so that the nodes do not look at the same moment), this
/// thread reads which node leads each partition from the leader keys in etcd and, when this node
/// leads more than its share, hands **one** leadership to a caught-up follower leading at least
/// two fewer, through the epoch-checked hand-off (``PartitionReplica/handOff(to:)``): the
/// successor recovers as any new leader does, so nothing acknowledged is lost, and a write in
/// flight meanwhile is retried by its client at the successor. One hand-off per pass and node,
/// and the two-fewer rule, keep the nodes from trading a leadership back and forth; a node
/// marked draining (``DrainingNodes``) is handed nothing.
final class LeadershipBalance: @unchecked Sendable {
    /// A partition this node leads, and the nodes of its followers that could lead it now.
    struct Led: Sendable, Equatable {
        /// The partition (`books.p7`).
        let partition: String
        /// The followers heard from lately and nearly caught up.
        let followers: [String]
    }

    /// The most records a follower may lack and still take a leadership handed to it: it
    /// recovers them from the others first, and a short recovery keeps the hand-off's pause short.
    static let caughtUpRecords: UInt64 = 1024
    /// The longest a follower may have been silent and still take a leadership handed to it.
    static let heardWithin = Duration.seconds(2)

    private let node: String
    private let etcd: EtcdClient
    private let interval: Duration
    private let replicas: @Sendable () -> [PartitionReplica]
    private let logger = Logger(component: "replica")
    /// Whether ``stop()`` was asked, and whether the thread has ended.
    private let state = Monitor((stopping: false, finished: false))

    /// The balance of `node`'s leaderships, over the leader keys in `etcd` and the replicas
    /// `replicas` returns (those running now), looked at every `interval`.
    init(node: String, etcd: EtcdClient, interval: Duration, replicas: @escaping @Sendable () -> [PartitionReplica]) {
        self.node = node
        self.etcd = etcd
        self.interval = interval
        self.replicas = replicas
    }

    /// Starts the thread.
    func start() {
        Thread.detachNewThread { [self] in
            Thread.nameCurrent("leader-balance")
            defer { state.update { $0.finished = true } }
            var random = SystemRandomNumberGenerator()
            while true {
                let wait = interval * Double.random(in: 0.75...1.25, using: &random)
                if state.wait(until: { $0.stopping }, deadline: ContinuousClock.now + wait) { return }
                pass()
            }
        }
    }

    /// Stops the thread, waiting for a pass under way (a hand-off asked for stays asked).
    func stop() {
        state.update { $0.stopping = true }
        state.wait(until: { $0.finished })
    }

    /// One look: the hand-off ``next(node:leaders:led:)`` chooses, if any, made.
    private func pass() {
        var led: [Led] = []
        var running: [String: PartitionReplica] = [:]
        for replica in replicas() {
            guard let leader = replica.servingLeader else { continue }
            let followers = leader.followers.filter { $0.lagRecords <= Self.caughtUpRecords && $0.silence < Self.heardWithin }
            led.append(Led(partition: replica.partition, followers: followers.map(\.node)))
            running[replica.partition] = replica
        }
        guard !led.isEmpty else { return }
        let leaders: [String: String]
        let draining: Set<String>
        do {
            leaders = try currentLeaders()
            draining = try DrainingNodes.list(in: etcd)
        } catch {
            logger.warning("cannot read the leader keys to even out the leaderships", ["error": error.description])
            return
        }
        // A node that is stopping hands its leaderships away (LeadershipHandOff): none goes to it.
        let eligible = led.map { Led(partition: $0.partition, followers: $0.followers.filter { !draining.contains($0) }) }
        guard let move = Self.next(node: node, leaders: leaders, led: eligible), let replica = running[move.partition] else { return }
        logger.info("handing a leadership over to even out the leaderships", [
            "partition": move.partition, "to": move.to, "led_here": String(led.count),
        ])
        do {
            _ = try replica.handOff(to: move.to)
        } catch {
            logger.warning("could not hand a leadership over", ["partition": move.partition, "to": move.to, "error": "\(error)"])
        }
    }

    /// Each partition's leading node, from the leader keys. A value that names no node (written
    /// by something other than a Lyceum worker) is left out of the count, with a warning: its
    /// partition's followers refuse to follow it anyway (``PartitionReplica``).
    private func currentLeaders() throws(CoordinationError) -> [String: String] {
        var leaders: [String: String] = [:]
        for entry in try etcd.list(prefix: ReplicationPlan.leaderKeyPrefix).values {
            let partition = String(entry.key.dropFirst(ReplicationPlan.leaderKeyPrefix.count))
            do {
                leaders[partition] = try LeaderAddress(parsing: String(decoding: entry.value, as: UTF8.self)).node
            } catch {
                logger.warning("a leader key names no node; not counted in the balance", ["key": entry.key, "error": "\(error)"])
            }
        }
        return leaders
    }

    /// The hand-off `node` makes now, if any: for each service it leads partitions of (in name
    /// order), the first move from `node` of the `LeadershipPlan` over `leaders` (each
    /// partition's leading node, from etcd) and `led` (this node's leaderships, each held by this
    /// node and the followers that could take it: the only holders this node knows of, and the
    /// only ones it may hand to). This node's own word on what it leads comes before etcd's.
    static func next(node: String, leaders: [String: String], led: [Led]) -> (partition: String, to: String)? {
        var replicas: [String: [Int: Set<String>]] = [:]
        var leading: [String: [Int: String]] = [:]
        for (name, leader) in leaders {
            guard let (service, partition) = PartitionName.parse(service: name) else { continue }
            replicas[service, default: [:]][partition] = [leader]
            leading[service, default: [:]][partition] = leader
        }
        var services: Set<String> = []
        for entry in led {
            guard let (service, partition) = PartitionName.parse(service: entry.partition) else { continue }
            services.insert(service)
            replicas[service, default: [:]][partition] = Set([node] + entry.followers)
            leading[service, default: [:]][partition] = node
        }
        for service in services.sorted() {
            let plan = LeadershipPlan(replicas: replicas[service] ?? [:], leaders: leading[service] ?? [:])
            if let move = plan.moves.first(where: { $0.from == node }) {
                return (PartitionName.service(service, partition: move.partition), move.to)
            }
        }
        return nil
    }
}
