import Coordination
import Foundation
import LearningServices
import LyceumLogging
import LyceumSupport
import Majordomo
import Partitions
import Replication
import ServiceHosting
import Synchronization
import ZeroMQ

/// How a partitioned worker replicates the partitions it holds (setting `replicas` > 1,
/// protocol/replication.md): each is served only while this node leads it.
public struct ReplicationPlan: Sendable {
    /// The replica set's size.
    public let replicas: Int
    /// etcd, where the leader keys are.
    public let etcd: EtcdClient
    /// The leases' timings.
    public let timing: LeaseTiming
    /// Where the process's replication ROUTER binds, serving every partition it leads
    /// (`tcp://ADDRESS:PORT`, routable by the other replicas: it goes into the leader keys).
    public let endpoint: String
    /// The process's ZeroMQ context.
    public let context: Context
    /// The links' security: CURVE with this node's keys, admitting and following worker keys
    /// only, or plaintext.
    public let security: ReplicationSecurity
    /// How often the node evens out its leaderships (``LeadershipBalance``); zero: never.
    public let balanceInterval: Duration

    /// Where every partition's leader key is in etcd: this, then the partition (`books.p7`).
    public static let leaderKeyPrefix = "lyceum/leader/"

    /// A plan for replica sets of `replicas` in `etcd`.
    public init(
        replicas: Int, etcd: EtcdClient, timing: LeaseTiming, endpoint: String, context: Context,
        security: ReplicationSecurity = .plaintext, balanceInterval: Duration = .zero
    ) {
        self.replicas = replicas
        self.etcd = etcd
        self.timing = timing
        self.endpoint = endpoint
        self.context = context
        self.security = security
        self.balanceInterval = balanceInterval
    }
}

/// The partitions a partitioned worker serves, all on the process's one worker pool: a partition
/// moving out is removed from the pool (its requests in hand answered, its sessions leaving
/// every broker) and its journal closed; one moving in is opened and added, while the others and
/// every other service keep serving on the same thread. What changes follows the partitions
/// held: the pool's services, the host's journals (status, metrics), and the progress snapshot
/// table through `changed`.
public final class PartitionedWorker: PartitionCustody {
    /// Makes the pool handler that answers one partition's instance.
    public typealias HandlerMaker = @Sendable (HostedService) -> WorkerPool.Handler
    /// Told about each partition that started (`true`) or stopped (`false`) being served after
    /// the start, once its requests have been answered; the progress snapshots follow it.
    public typealias Change = @Sendable (_ hosted: HostedService, _ served: Bool) -> Void

    let node: String
    private let host: ServiceHost
    private let dataDirectory: String
    private let budget: WorkerSessionBudget
    private let makeHandler: HandlerMaker
    private let changed: Change
    private let live: Mutex<[String: HostedService]>
    /// The pool, once ``serve(on:)`` gave it.
    private let pool = Mutex<WorkerPool?>(nil)
    /// One release or serve at a time, so that a partition's removal and re-adding never cross.
    /// A `Monitor` for its lock that never spins: a change replays a partition, which takes long.
    private let changing = Monitor(())
    private let logger = Logger(component: "worker")
    /// How the partitions held are replicated; `nil` when each is this node's alone.
    private let replication: ReplicationPlan?
    /// The process's one replication ROUTER, once a replica started (``router(_:)``).
    private let linkRouter = Mutex<ReplicationRouter?>(nil)
    /// The process's links to the leaders its replicas follow, once a replica started.
    private let followerLinks = Mutex<FollowerLinks?>(nil)
    /// The partitions held, replicated: served only while led (``startReplicas()``).
    private let replicated: [(service: String, partition: Int)]
    /// The replicas running, with their stores and metrics: one per replicated partition held,
    /// until it moves away or ``stopReplicas(resign:)``.
    private let replicas = Mutex<[(replica: PartitionReplica, store: PartitionReplicaStore, metrics: ReplicaMetrics)]>([])
    /// The thread evening out this node's leaderships, while the replicas run.
    private let leadershipBalance = Mutex<LeadershipBalance?>(nil)
    /// Set once the replicas are stopping: the pool has stopped, so a leadership that ends
    /// only steps down.
    private let stoppingReplicas = Mutex(false)
    /// The partitions ``withdraw(_:)`` took off the pool ahead of a hand-off: when their
    /// leadership ends, their service is stepped down without a second removal.
    private let withdrawn = Mutex<Set<String>>([])

    /// The partitions `host` opened at the start, to be served on the pool given to ``serve(on:)``;
    /// one moving in is admitted while it fits `budget`. With `replication`, the partitions
    /// held are not served at the start: their instances are closed, and ``startReplicas()``
    /// serves each while this node leads it.
    public init(
        node: String, host: ServiceHost, dataDirectory: String, budget: WorkerSessionBudget, handler: @escaping HandlerMaker,
        changed: @escaping Change = { _, _ in }, replication: ReplicationPlan? = nil
    ) {
        self.node = node
        self.host = host
        self.dataDirectory = dataDirectory
        self.budget = budget
        makeHandler = handler
        self.changed = changed
        self.replication = replication
        let held = host.services.filter { $0.partition != nil }
        if replication != nil {
            replicated = held.compactMap { hosted in hosted.partition.map { (hosted.service.name, $0.partition) } }
            for hosted in held { host.close(hosted) }
            live = Mutex([:])
        } else {
            replicated = []
            live = Mutex(Dictionary(uniqueKeysWithValues: held.map { ($0.name, $0) }))
        }
    }

    /// Opens each replicated partition's journal as its replica store and starts its
    /// `PartitionReplica`: the partition is served (its service made over the replayed state,
    /// writing through `ReplicatedChangeLog`, and registered with the brokers) while this node
    /// leads it, and removed when the leadership ends. Call once, after ``serve(on:)``.
    public func startReplicas() throws {
        for (service, partition) in replicated { try startReplica(service: service, partition: partition) }
        guard let replication, replication.balanceInterval > .zero else { return }
        let balance = LeadershipBalance(node: node, etcd: replication.etcd, interval: replication.balanceInterval) { [weak self] in
            self?.replicas.withLock { $0.map(\.replica) } ?? []
        }
        leadershipBalance.withLock { $0 = balance }
        balance.start()
    }

    /// Opens the partition's journal as its replica store and starts its `PartitionReplica`
    /// (at the start, or once a move brought the partition here); nothing when one runs.
    private func startReplica(service: String, partition: Int) throws {
        guard let replication, !isServing(service: service, partition: partition) else { return }
        let name = PartitionName.service(service, partition: partition)
        let store = try host.openReplica(of: service, partition: partition)
        let history: EpochHistory
        do { history = try EpochHistory(path: (store.directory as NSString).appendingPathComponent("epochs.jsonl")) } catch {
            store.close()
            throw error
        }
        let metrics = ReplicaMetrics(service: service, partition: partition)
        let replica = PartitionReplica(
            partition: name, node: node, endpoint: replication.endpoint, router: try router(replication), links: links(replication), store: store, history: history,
            replicas: replication.replicas, election: LeaderElection(client: replication.etcd, key: ReplicationPlan.leaderKeyPrefix + name),
            timing: replication.timing, security: replication.security,
            onChange: { [weak self] role in self?.roleChanged(service: service, partition: partition, store: store, role: role) },
            onCommitted: metrics.committed)
        replicas.withLock { $0.append((replica, store, metrics)) }
    }

    /// The process's replication ROUTER, bound on the plan's endpoint by the first replica.
    /// - Throws: its bind error.
    private func router(_ replication: ReplicationPlan) throws -> ReplicationRouter {
        try linkRouter.withLock { router in
            if let router { return router }
            let made = try ReplicationRouter(context: replication.context, endpoint: replication.endpoint, security: replication.security.leading)
            router = made
            return made
        }
    }

    /// The process's links to leaders, made by the first replica.
    private func links(_ replication: ReplicationPlan) -> FollowerLinks {
        followerLinks.withLock { links in
            if let links { return links }
            let made = FollowerLinks(context: replication.context)
            links = made
            return made
        }
    }

    /// What each replica of a partition held here does now (`describe`, `lyceum status`), in
    /// the order started.
    public var replicaStatuses: [ReplicaStatus] {
        replicas.withLock { $0.map(\.replica) }.map(\.status)
    }

    /// Sets the replicas' gauges (leadership, epoch, the followers' lag) to what they are now:
    /// called before each scrape of the metrics endpoint.
    public func refreshReplicaMetrics() {
        for (replica, _, metrics) in replicas.withLock({ $0 }) { metrics.record(replica.status) }
    }

    /// The replicas running now, in the order started.
    var runningReplicas: [PartitionReplica] {
        replicas.withLock { $0.map(\.replica) }
    }

    /// Whether every replica held has caught up (``PartitionReplica/isCaughtUp``): what
    /// `/readyz` waits for on a replicating worker (true when it holds none).
    public var replicasCaughtUp: Bool {
        runningReplicas.allSatisfy(\.isCaughtUp)
    }

    /// Stops evening out this node's leaderships: it is about to hand them all away.
    func stopBalancing() {
        leadershipBalance.withLock { $0 }?.stop()
    }

    /// Takes the partition this node leads (`books.p7`) off the pool ahead of handing its
    /// leadership over: its sessions answer the requests in hand (a write once its majority has
    /// it, the link still running) and leave every broker, which holds the partition's next
    /// requests for its next leader; so that no write waits for a majority when the leadership
    /// ends. Returns once they have left; false when the partition is not served here.
    func withdraw(_ partition: String) -> Bool {
        changing.withLock { _ in
            guard live.withLock({ $0[partition] != nil }), !withdrawn.withLock({ $0.contains(partition) }) else { return false }
            do {
                try attachedPool().removeService(partition)
            } catch {
                logger.warning("cannot withdraw the partition before handing it over", ["partition": partition, "error": "\(error)"])
                return false
            }
            withdrawn.withLock { _ = $0.insert(partition) }
            return true
        }
    }

    /// Stops every replica once the pool has stopped (its requests in hand answered): with
    /// `resign`, a leader deletes its leader key and revokes its lease, so that a follower takes
    /// over at once instead of after the lease's TTL; then every replica's journal is closed.
    public func stopReplicas(resign: Bool) {
        stoppingReplicas.withLock { $0 = true }
        leadershipBalance.withLock { $0 }?.stop()
        let stopped = replicas.withLock { running in
            defer { running.removeAll() }
            return running
        }
        // Side by side: each stop waits for its candidacy's thread and an etcd round trip.
        Concurrently.forEach(stopped.map { StoppingReplica(replica: $0.replica, store: $0.store) }) { stopping in
            stopping.replica.stop(resign: resign)
            stopping.store.close()
        }
        linkRouter.withLock { $0 }?.stop()
        if !stopped.isEmpty { logger.info("replicas stopped", ["partitions": String(stopped.count), "resigned": String(resign)]) }
    }

    /// Stops the replica of a partition moving away: leading, it resigns (its service removed
    /// first, the writes waiting for a majority failed), so that another replica of the set
    /// leads at once; then its journal is closed, unlocking the directory for the copy. The set
    /// goes on with the others meanwhile, as if this replica were down.
    private func stopReplica(service: String, partition: Int) throws {
        let name = PartitionName.service(service, partition: partition)
        let stopped = replicas.withLock { running in
            running.firstIndex { $0.replica.partition == name }.map { running.remove(at: $0) }
        }
        guard let stopped else {
            throw PartitionLayoutError(path: directory(service: service, partition: partition), "no replica of \(name) runs on node \(node)")
        }
        stopped.replica.stop(resign: true)
        stopped.store.close()
        stopped.metrics.forget()
        logger.info("replica stopped for a move", ["partition": name])
    }

    /// Serves a replicated partition while this node leads it, and stops serving it otherwise.
    private func roleChanged(service: String, partition: Int, store: PartitionReplicaStore, role: PartitionReplica.Role) {
        let name = PartitionName.service(service, partition: partition)
        changing.withLock { _ in
            switch role {
            case .leading(let link):
                guard live.withLock({ $0[name] == nil }) else { return }
                do {
                    let pool = try attachedPool()
                    let hosted = try host.lead(store, service: service, partition: partition, with: link)
                    changed(hosted, true)
                    do {
                        try pool.addService(name, handler: makeHandler(hosted))
                    } catch {
                        changed(hosted, false)
                        host.stepDown(hosted)
                        throw error
                    }
                    live.withLock { $0[name] = hosted }
                    logger.info("partition led", ["partition": name, "epoch": String(link.epoch)])
                } catch {
                    logger.error("cannot serve the partition this node leads", ["partition": name, "error": "\(error)"])
                }
            case .candidate, .following:
                guard let hosted = live.withLock({ $0.removeValue(forKey: name) }) else { return }
                // Its requests in hand are answered first: writes the majority did not acknowledge
                // under this leadership fail (`unavailable`), and clients retry at the next leader.
                // Once the replicas stop, the pool has stopped: its sessions left every broker.
                let wasWithdrawn = withdrawn.withLock { $0.remove(name) != nil }
                if !stoppingReplicas.withLock({ $0 }), !wasWithdrawn {
                    do {
                        try attachedPool().removeService(name)
                    } catch {
                        logger.error("cannot remove the partition this node stopped leading", ["partition": name, "error": "\(error)"])
                    }
                }
                host.stepDown(hosted)
                changed(hosted, false)
                logger.info("partition no longer led", ["partition": name])
            }
        }
    }

    /// The pool services of the partitions held at the start, for the process's pool to start with.
    public var poolServices: [(name: String, handler: WorkerPool.Handler)] {
        served.map { ($0.name, makeHandler($0)) }
    }

    /// Serves moves on `pool`, the process's pool, started with ``poolServices``.
    public func serve(on pool: WorkerPool) {
        self.pool.withLock { $0 = pool }
    }

    /// The partitions' instances being served now, in service then partition order.
    public var served: [HostedService] {
        live.withLock { $0.values.map { $0 } }.sorted {
            ($0.service.name, $0.partition?.partition ?? -1) < ($1.service.name, $1.partition?.partition ?? -1)
        }
    }

    /// The copies of partitions this node renamed away in moves, of every partitioned service
    /// asked for (a node may have moved all of one away).
    var movedAway: [MovedAwayCopy] {
        MovedAwayCopy.all(in: dataDirectory, services: host.descriptors.filter(\.isJournaled).map(\.name).sorted())
    }

    func directory(service: String, partition: Int) -> String {
        ((dataDirectory as NSString).appendingPathComponent(service) as NSString).appendingPathComponent(PartitionName.directory(partition))
    }

    /// Whether the partition is served here; replicated, whether a replica of it runs here
    /// (leading or not).
    func isServing(service: String, partition: Int) -> Bool {
        let name = PartitionName.service(service, partition: partition)
        if replication != nil { return replicas.withLock { $0.contains { $0.replica.partition == name } } }
        return live.withLock { $0[name] != nil }
    }

    func admit(service: String, partition: Int) throws {
        guard !isServing(service: service, partition: partition) else { return }
        let name = PartitionName.service(service, partition: partition)
        // The unpartitioned instances, the partitions served, the node service, and this one.
        let instances = host.services.filter { $0.partition == nil }.count + live.withLock { $0.count } + 2
        if let refusal = budget.refusal(instances: instances) {
            throw ServiceError(.unavailable, "node \(node) cannot serve \(name) too: \(refusal)")
        }
    }

    func release(service: String, partition: Int) throws {
        // Not under `changing`: a leader's resignation removes its service through `roleChanged`.
        if replication != nil { return try stopReplica(service: service, partition: partition) }
        let name = PartitionName.service(service, partition: partition)
        try changing.withLock { _ in
            guard let hosted = live.withLock({ $0[name] }) else {
                throw PartitionLayoutError(path: directory(service: service, partition: partition), "is not served by node \(node)")
            }
            // The partition's sessions reply to the requests in hand (durable writes reply only
            // once durable), then say DISCONNECT: the brokers hold its next requests.
            try attachedPool().removeService(name)
            live.withLock { _ = $0.removeValue(forKey: name) }
            host.close(hosted)
            changed(hosted, false)
            logger.info("partition released", ["partition": name])
        }
    }

    func serve(service: String, partition: Int) throws {
        if replication != nil { return try startReplica(service: service, partition: partition) }
        let name = PartitionName.service(service, partition: partition)
        try changing.withLock { _ in
            guard live.withLock({ $0[name] == nil }) else { return }
            let pool = try attachedPool()
            let hosted = try host.openPartition(of: service, partition: partition)
            // In the snapshots before its first event can be published.
            changed(hosted, true)
            do {
                try pool.addService(name, handler: makeHandler(hosted))
            } catch {
                changed(hosted, false)
                host.close(hosted)
                throw error
            }
            live.withLock { $0[name] = hosted }
            logger.info("partition served", ["partition": name])
        }
    }

    func handOff(service: String, partition: Int, to successor: String) throws {
        let name = PartitionName.service(service, partition: partition)
        guard replication != nil else {
            throw ServiceError(.badRequest, "node \(node) does not replicate its partitions: move \(name) itself, without leadership")
        }
        guard let replica = replicas.withLock({ $0.first { $0.replica.partition == name }?.replica }) else {
            throw ServiceError(.notFound, "node \(node) holds no replica of \(name)")
        }
        guard try replica.handOff(to: successor) else {
            throw ServiceError(.unavailable, "node \(node) does not lead \(name) now")
        }
    }

    private func attachedPool() throws -> WorkerPool {
        guard let pool = pool.withLock({ $0 }) else {
            throw PartitionLayoutError(path: dataDirectory, "node \(node) is not serving yet")
        }
        return pool
    }
}

/// A replica and its store, stopped together (``PartitionedWorker/stopReplicas(resign:)``).
private struct StoppingReplica: Sendable {
    let replica: PartitionReplica
    let store: PartitionReplicaStore
}
