import LyceumLifecycle
import LyceumSupport

/// A replicating worker's replicas as a component of its process, listed before the worker
/// pool. As a ``LyceumLifecycle/ReadinessReporting`` component, the process's group stops it
/// only once the pool has stopped (the leaderships handed over by ``LeadershipHandOff`` first,
/// then every partition's sessions left the brokers after answering the requests in hand). It
/// then stops the replicas, resigning whatever leadership is left (protocol/replication.md,
/// *Graceful stop*), and runs what the process asked to run last (removing the node's draining
/// mark and its formats entry from etcd). Whether the replicas are caught up is
/// ``ReplicaReadiness``'s.
public final class ReplicaHandOver: ReadinessReporting {
    private let worker: PartitionedWorker
    private let afterStop: @Sendable () -> Void
    /// Whether ``shutdown()`` was called.
    private let stopRequested = Monitor(false)

    /// The hand-over of `worker`'s replicas when the process stops, calling `afterStop` once
    /// the replicas stopped.
    public init(worker: PartitionedWorker, afterStop: @escaping @Sendable () -> Void = {}) {
        self.worker = worker
        self.afterStop = afterStop
    }

    /// Waits for ``shutdown()``, then stops the replicas, resigning, and runs `afterStop`.
    public func run() throws {
        stopRequested.wait(until: { $0 })
        worker.stopReplicas(resign: true)
        afterStop()
    }

    /// Asks ``run()`` to hand over and return.
    public func shutdown() {
        stopRequested.update { $0 = true }
    }

    /// Ready at once: the replicas were started with the worker.
    public func waitUntilReady(timeout: Duration) throws {}
}
