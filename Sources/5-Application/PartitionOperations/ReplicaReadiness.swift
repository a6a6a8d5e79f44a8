import LyceumLifecycle
import LyceumSupport

/// A replicating worker's ``LyceumLifecycle/Readiness/caughtUp`` condition, kept true exactly
/// while every replica it holds is caught up (``PartitionedWorker/replicasCaughtUp``): looked at
/// every ``interval`` on a thread of its own, so that `/readyz` (and systemd's `READY=1`) waits
/// after a start until this node could take over any partition it holds without a long recovery,
/// and turns false again while a replica lags or its leader is gone. A rolling restart waits on
/// it before it stops the next host (docs/kubernetes.md: the pods' readiness and startup probes).
public final class ReplicaReadiness: Component {
    /// How often the replicas are looked at: a follower hears its leader every 500 ms.
    static let interval = Duration.milliseconds(250)

    private let worker: PartitionedWorker
    private let readiness: Readiness
    private let stopping = Monitor(false)

    /// Keeps `readiness`'s ``LyceumLifecycle/Readiness/caughtUp`` true while `worker`'s replicas are caught up.
    public init(worker: PartitionedWorker, readiness: Readiness) {
        self.worker = worker
        self.readiness = readiness
    }

    /// Looks at the replicas every ``interval`` until ``shutdown()``.
    public func run() throws {
        var wasCaughtUp: Bool?
        repeat {
            let caughtUp = worker.replicasCaughtUp
            if caughtUp != wasCaughtUp {
                caughtUp ? readiness.meet(Readiness.caughtUp) : readiness.withdraw(Readiness.caughtUp)
                wasCaughtUp = caughtUp
            }
        } while !stopping.wait(until: { $0 }, deadline: .now + Self.interval)
    }

    /// Asks ``run()`` to return.
    public func shutdown() {
        stopping.update { $0 = true }
    }
}
