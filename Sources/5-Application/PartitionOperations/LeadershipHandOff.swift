import Coordination
import Foundation
import LyceumLifecycle
import LyceumLogging
import LyceumSupport
import Synchronization

/// A replicating worker's pool as a component that, asked to stop, first hands every leadership
/// of its node to a caught-up follower (protocol/replication.md, *Graceful stop*), and only then
/// stops the pool. For each partition: its service leaves the pool (the requests in hand
/// answered, a write once its majority has it; the brokers hold the next ones), then the
/// epoch-checked hand-off (``PartitionReplica/handOff(to:)``) names the follower that leads
/// next, which recovers and registers; the partitions are handed over side by side. So a rolling
/// restart costs each partition a hand-off's pause, never a lease's, and no request fails.
///
/// The node marks itself draining in etcd first (``DrainingNodes``) so that no node's
/// leadership balance hands it a leadership back meanwhile. What cannot be handed over (no
/// caught-up follower, etcd unreachable) is resigned once the pool has stopped, as before.
public final class LeadershipHandOff: Component {
    /// The longest the hand-offs may take in all, before the pool stops regardless: within the
    /// process's 10 s grace period, leaving the pool's drain and the replicas' stop their time.
    public static let bound = Duration.seconds(5)

    private let pool: any Component
    private let worker: PartitionedWorker
    private let etcd: EtcdClient
    private let leaseSeconds: Int
    private let logger = Logger(component: "replica")
    /// Whether the hand-offs began, and the lease of the draining mark once made.
    private let state = Mutex<(began: Bool, mark: Int64?)>((false, nil))

    /// `pool` (the worker's pool component), stopped after `worker`'s leaderships were handed
    /// over through `etcd`; the draining mark lives `leaseSeconds` past ``bound`` at most.
    public init(pool: any Component, worker: PartitionedWorker, etcd: EtcdClient, leaseSeconds: Int) {
        self.pool = pool
        self.worker = worker
        self.etcd = etcd
        self.leaseSeconds = leaseSeconds
    }

    /// Runs the pool.
    public func run() throws {
        try pool.run()
    }

    /// Hands the leaderships over on a thread of its own, then stops the pool; returns at once.
    public func shutdown() {
        let first = state.withLock { current in
            defer { current.began = true }
            return !current.began
        }
        guard first else { return }
        Thread.detachNewThread { [self] in
            Thread.nameCurrent("leader-handoff")
            handOverAll()
            pool.shutdown()
        }
    }

    /// Removes the draining mark (the process is about to exit): called once the replicas stopped.
    public func unmark() {
        guard let lease = state.withLock({ $0.mark }) else { return }
        do { try etcd.revokeLease(lease) } catch {
            logger.warning("could not remove the draining mark; it expires with its lease", ["node": worker.node, "error": error.description])
        }
    }

    private func handOverAll() {
        let start = ContinuousClock.now
        let deadline = start + Self.bound
        worker.stopBalancing()
        var draining: Set<String> = []
        do {
            let lease = try DrainingNodes.mark(worker.node, in: etcd, ttlSeconds: leaseSeconds + Int(Self.bound.components.seconds))
            state.withLock { $0.mark = lease }
            draining = try DrainingNodes.list(in: etcd)
        } catch {
            logger.warning("cannot mark this node draining; handing over regardless", ["node": worker.node, "error": error.description])
        }
        var moves: [Move] = []
        var kept: [String] = []
        for replica in worker.runningReplicas {
            guard let leader = replica.servingLeader else { continue }
            let candidates = leader.followers.filter {
                $0.lagRecords <= LeadershipBalance.caughtUpRecords && $0.silence < LeadershipBalance.heardWithin && !draining.contains($0.node)
            }
            guard let successor = candidates.min(by: { $0.lagRecords < $1.lagRecords })?.node else {
                kept.append(replica.partition)
                continue
            }
            moves.append(Move(replica: replica, successor: successor))
        }
        // Side by side: each hand-off is a removal from the pool and two etcd round trips, and
        // one after another they took over 5 s for 29 leaderships.
        let outcomes = Mutex<(handed: [PartitionReplica], kept: [String])>(([], kept))
        Concurrently.forEach(moves) { [self] move in
            guard ContinuousClock.now < deadline, worker.withdraw(move.replica.partition) else {
                outcomes.withLock { $0.kept.append(move.replica.partition) }
                return
            }
            do {
                let handed = try move.replica.handOff(to: move.successor)
                outcomes.withLock { handed ? $0.handed.append(move.replica) : $0.kept.append(move.replica.partition) }
            } catch {
                logger.warning("could not hand a leadership over; it is resigned at the stop", [
                    "partition": move.replica.partition, "to": move.successor, "error": "\(error)",
                ])
                outcomes.withLock { $0.kept.append(move.replica.partition) }
            }
        }
        let (handed, notHanded) = outcomes.withLock { ($0.handed, $0.kept.sorted()) }
        // Each successor serves once it has recovered; this node, following it, is then caught
        // up in its epoch. Waiting for that keeps this node's replica in the successor's majority.
        // Polled: the replicas' roles change on their candidacies' and links' threads, which
        // tell nobody here, and the wait is short and bounded.
        var served = false
        while !served, ContinuousClock.now < deadline {
            served = handed.allSatisfy { replica in
                let status = replica.status
                return status.role == .following && status.leader != worker.node && replica.isCaughtUp
            }
            if !served { Thread.sleep(forTimeInterval: 0.05) }
        }
        logger.info("leaderships handed over before stopping", [
            "handed": String(handed.count), "kept": notHanded.joined(separator: ","), "successors_serving": String(served),
            "ms": String((ContinuousClock.now - start).milliseconds),
        ])
    }
}

/// One hand-off to make: `replica`'s leadership to the node `successor`.
private struct Move: Sendable {
    let replica: PartitionReplica
    let successor: String
}

/// The nodes stopping in a replicated cluster: each marks itself under `lyceum/draining/`
/// (bound to a lease, so that a mark outlives no process by more than its TTL), and no node
/// hands a leadership to a marked one (``LeadershipBalance``, ``LeadershipHandOff``).
enum DrainingNodes {
    /// Where the marks are: this, then the node's name.
    static let keyPrefix = "lyceum/draining/"

    /// Marks `node` draining for `ttlSeconds` at most; returns the mark's lease.
    static func mark(_ node: String, in etcd: EtcdClient, ttlSeconds: Int) throws(CoordinationError) -> Int64 {
        let lease = try etcd.grantLease(ttlSeconds: ttlSeconds)
        _ = try etcd.put(keyPrefix + node, value: Array(node.utf8), lease: lease.id)
        return lease.id
    }

    /// The nodes marked draining now.
    static func list(in etcd: EtcdClient) throws(CoordinationError) -> Set<String> {
        Set(try etcd.list(prefix: keyPrefix).values.map { String($0.key.dropFirst(keyPrefix.count)) })
    }
}
