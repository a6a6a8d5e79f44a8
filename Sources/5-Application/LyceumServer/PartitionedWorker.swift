import Foundation
import LyceumLifecycle
import LyceumLogging
import Majordomo
import Partitions
import Synchronization

/// The partitions a partitioned worker serves, each with a worker pool of its own, so that one
/// can be stopped (its journal closed for a move) or started (after adopting one) while the
/// others keep serving. Runs as one service of the worker's group: it starts the pools of the
/// partitions the host opened, and on shutdown stops every pool and closes the journals of the
/// partitions it adopted since.
final class PartitionedWorker: Service, PartitionCustody {
    /// Makes the worker pool that serves one partition's instance.
    typealias PoolMaker = @Sendable (HostedService) throws -> WorkerPool

    let node: String
    private let host: ServiceHost
    private let dataDirectory: String
    private let makePool: PoolMaker
    private let live = Mutex<[String: (hosted: HostedService, thread: ServiceThread)]>([:])
    private let stopping = NSCondition()
    private let stopped = Mutex(false)
    private let logger = Logger(component: "worker")

    init(node: String, host: ServiceHost, dataDirectory: String, makePool: @escaping PoolMaker) {
        self.node = node
        self.host = host
        self.dataDirectory = dataDirectory
        self.makePool = makePool
    }

    /// The partitions' instances being served now, in service then partition order.
    var served: [HostedService] {
        live.withLock { $0.values.map(\.hosted) }.sorted {
            ($0.service.name, $0.partition?.partition ?? -1) < ($1.service.name, $1.partition?.partition ?? -1)
        }
    }

    /// The copies of partitions this node renamed away in moves (`DATA/<service>/p<N>.moved-to-<node>-<time>`).
    var movedAway: [(service: String, partition: Int, to: String, directory: String)] {
        var found: [(service: String, partition: Int, to: String, directory: String)] = []
        for service in Set(host.services.compactMap { $0.partition == nil ? nil : $0.service.name }).sorted() {
            let parent = (dataDirectory as NSString).appendingPathComponent(service)
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []).sorted() {
                guard let moved = PartitionMover.movedAway(name) else { continue }
                found.append((service, moved.partition, moved.to, (parent as NSString).appendingPathComponent(name)))
            }
        }
        return found
    }

    func run() throws {
        for hosted in host.services where hosted.partition != nil { try start(hosted) }
        stopping.lock()
        while !stopped.withLock({ $0 }) { stopping.wait() }
        stopping.unlock()
        let all = live.withLock { live in defer { live.removeAll() }; return Array(live.values) }
        for entry in all { entry.thread.shutdown() }
        for entry in all {
            _ = entry.thread.join()
            entry.hosted.journal?.close()
        }
    }

    func shutdown() {
        stopping.lock()
        stopped.withLock { $0 = true }
        stopping.broadcast()
        stopping.unlock()
    }

    func directory(service: String, partition: Int) -> String {
        ((dataDirectory as NSString).appendingPathComponent(service) as NSString).appendingPathComponent(PartitionName.directory(partition))
    }

    func release(service: String, partition: Int) throws {
        let name = PartitionName.service(service, partition: partition)
        guard let entry = live.withLock({ $0.removeValue(forKey: name) }) else {
            throw PartitionLayoutError(path: directory(service: service, partition: partition), "is not served by node \(node)")
        }
        // The pool's sessions reply to the requests in hand (durable writes reply only once
        // durable), then say DISCONNECT: the brokers hold the partition's next requests.
        _ = entry.thread.stop()
        entry.hosted.journal?.close()
        logger.info("partition released", ["partition": name])
    }

    func serve(service: String, partition: Int) throws {
        let name = PartitionName.service(service, partition: partition)
        guard live.withLock({ $0[name] == nil }) else { return }
        try start(host.openPartition(of: service, partition: partition))
        logger.info("partition served", ["partition": name])
    }

    private func start(_ hosted: HostedService) throws {
        let pool = try makePool(hosted)
        let thread = ServiceThread(pool, name: hosted.name) { [logger] error in
            if let error { logger.error("a partition's worker pool stopped", ["partition": hosted.name, "error": "\(error)"]) }
        }
        live.withLock { $0[hosted.name] = (hosted, thread) }
    }
}
