import Foundation
import LearningServices
import LyceumLogging
import Majordomo
import Partitions
import ServiceHosting
import Synchronization

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
    private let changing = NSLock()
    private let logger = Logger(component: "worker")

    /// The partitions `host` opened at the start, to be served on the pool given to ``serve(on:)``;
    /// one moving in is admitted while it fits `budget`.
    public init(
        node: String, host: ServiceHost, dataDirectory: String, budget: WorkerSessionBudget, handler: @escaping HandlerMaker,
        changed: @escaping Change = { _, _ in }
    ) {
        self.node = node
        self.host = host
        self.dataDirectory = dataDirectory
        self.budget = budget
        makeHandler = handler
        self.changed = changed
        live = Mutex(Dictionary(uniqueKeysWithValues: host.services.filter { $0.partition != nil }.map { ($0.name, $0) }))
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

    func isServing(service: String, partition: Int) -> Bool {
        live.withLock { $0[PartitionName.service(service, partition: partition)] != nil }
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
        let name = PartitionName.service(service, partition: partition)
        changing.lock()
        defer { changing.unlock() }
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

    func serve(service: String, partition: Int) throws {
        let name = PartitionName.service(service, partition: partition)
        changing.lock()
        defer { changing.unlock() }
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

    private func attachedPool() throws -> WorkerPool {
        guard let pool = pool.withLock({ $0 }) else {
            throw PartitionLayoutError(path: dataDirectory, "node \(node) is not serving yet")
        }
        return pool
    }
}
