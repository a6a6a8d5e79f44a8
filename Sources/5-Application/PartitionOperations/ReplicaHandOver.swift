import LyceumLifecycle
import LyceumSupport

/// A replicating worker's replicas as a component of its process, listed before the worker
/// pool: as a ``LyceumLifecycle/ReadinessReporting`` component, the process's group stops it
/// only once the pool has stopped (every partition's sessions left the brokers after answering
/// the requests in hand, durable writes once their majority acknowledged). It then stops the
/// replicas, resigning every leadership (protocol/replication.md, *Graceful stop*): a follower
/// takes over at once instead of after the lease's TTL.
public final class ReplicaHandOver: ReadinessReporting {
    private let worker: PartitionedWorker
    /// Whether ``shutdown()`` was called.
    private let stopRequested = Monitor(false)

    /// The hand-over of `worker`'s replicas when the process stops.
    public init(worker: PartitionedWorker) {
        self.worker = worker
    }

    /// Waits for ``shutdown()``, then stops the replicas, resigning.
    public func run() throws {
        stopRequested.wait(until: { $0 })
        worker.stopReplicas(resign: true)
    }

    /// Asks ``run()`` to hand over and return.
    public func shutdown() {
        stopRequested.update { $0 = true }
    }

    /// Ready at once: the replicas were started with the worker.
    public func waitUntilReady(timeout: Duration) throws {}
}
