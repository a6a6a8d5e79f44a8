import Foundation
import LyceumLifecycle
import LyceumSupport

/// A replicating worker's replicas as a component of its process, listed before the worker
/// pool. While the process runs, it meets the readiness condition ``Readiness/caughtUp`` once
/// every replica held has caught up (``PartitionedWorker/replicasCaughtUp``), so that `/readyz`
/// (and systemd's `READY=1`) answer ready only then: a rolling restart waits for it before the
/// next host. As a ``LyceumLifecycle/ReadinessReporting`` component, the process's group stops
/// it only once the pool has stopped (the leaderships handed over by ``LeadershipHandOff``
/// first, then every partition's sessions left the brokers after answering the requests in
/// hand). It then stops the replicas, resigning whatever leadership is left
/// (protocol/replication.md, *Graceful stop*), and runs what the process asked to run last
/// (removing the node's draining mark and its formats entry from etcd).
public final class ReplicaHandOver: ReadinessReporting {
    private let worker: PartitionedWorker
    private let readiness: Readiness?
    private let afterStop: @Sendable () -> Void
    private let stopRequested = Monitor(false)

    /// The hand-over of `worker`'s replicas when the process stops, meeting `readiness`'s
    /// ``Readiness/caughtUp`` meanwhile, and calling `afterStop` once the replicas stopped.
    public init(worker: PartitionedWorker, readiness: Readiness? = nil, afterStop: @escaping @Sendable () -> Void = {}) {
        self.worker = worker
        self.readiness = readiness
        self.afterStop = afterStop
    }

    /// Meets ``Readiness/caughtUp`` once the replicas have caught up, waits for ``shutdown()``,
    /// then stops the replicas, resigning.
    public func run() throws {
        // Polled every 100 ms until met: the replicas' links tell nobody when they catch up.
        while readiness != nil, !worker.replicasCaughtUp {
            if stopRequested.wait(until: { $0 }, deadline: .now + .milliseconds(100)) { break }
        }
        if !stopRequested.withLock({ $0 }) { readiness?.meet(Readiness.caughtUp) }
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
