import ServiceHosting
import Synchronization
import Telemetry

/// The metrics of one replicated partition on this node (docs/operations.md, *Status and
/// metrics*), labelled with its `service` and `partition` as its journal's are:
/// `lyceum_replica_leader` (1 while this node leads and serves it), `lyceum_replica_epoch`,
/// while leading `lyceum_replica_lag_records` and `lyceum_replica_lag_bytes` per `follower`,
/// and `lyceum_replica_commit_wait_seconds`, how long acknowledged writes waited for a majority.
/// The gauges are set from the replica's status before each scrape (``record(_:)``).
final class ReplicaMetrics: Sendable {
    private let dimensions: [(String, String)]
    private let leader: Gauge
    private let epoch: Gauge
    private let commitWait: Timer
    /// The followers whose lag series exist, to forget those no longer reported.
    private let reported = Mutex<Set<String>>([])

    /// The metrics of `service`'s partition `partition`.
    init(service: String, partition: Int) {
        dimensions = [("service", service), ("partition", String(partition))]
        leader = Gauge(label: "lyceum_replica_leader", dimensions: dimensions)
        epoch = Gauge(label: "lyceum_replica_epoch", dimensions: dimensions)
        commitWait = Timer(label: "lyceum_replica_commit_wait_seconds", dimensions: dimensions)
    }

    /// Records one acknowledged write's wait for its majority.
    var committed: @Sendable (Duration) -> Void { { [commitWait] in commitWait.record($0) } }

    /// Sets the gauges to `status`; a follower no longer reported (this node stopped leading,
    /// or it reconnected under another name) has its lag series removed.
    func record(_ status: ReplicaStatus) {
        leader.record(status.role == .leading ? 1 : 0)
        epoch.record(status.epoch)
        for follower in status.followers {
            let labels = dimensions + [("follower", follower.node)]
            Gauge(label: "lyceum_replica_lag_records", dimensions: labels).record(follower.lagRecords)
            Gauge(label: "lyceum_replica_lag_bytes", dimensions: labels).record(follower.lagBytes)
        }
        let now = Set(status.followers.map(\.node))
        let gone = reported.withLock { reported in
            defer { reported = now }
            return reported.subtracting(now)
        }
        for node in gone {
            ProcessMetrics.backend.forgetSeries(matching: dimensions + [("follower", node)])
        }
    }

    /// Removes every series of the partition, its journal's included: its replica moved away.
    func forget() {
        ProcessMetrics.backend.forgetSeries(matching: dimensions)
        reported.withLock { $0.removeAll() }
    }
}
