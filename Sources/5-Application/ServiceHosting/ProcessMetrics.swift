import Telemetry

/// The process's metrics backend: installed as the `MetricsSystem` factory the first time it is
/// asked for (so before any subsystem starts, by `ServerProcesses`), then rendered by `GET /metrics`.
/// The families below are every metric docs/operations.md, "Status and metrics", lists, each pushed by the
/// subsystem that knows it: requests (`RequestMetrics`), journals (`JournalMetrics`), the event
/// publisher (`EventMetrics`) and the broker (`BrokerMetrics`).
public enum ProcessMetrics {
    /// The backend, installed once per process.
    public static let backend: PrometheusMetrics = {
        let backend = PrometheusMetrics(describing: families, buckets: RequestMetrics.latencyBuckets)
        MetricsSystem.bootstrap(backend)
        return backend
    }()

    static let families: [MetricDescription] = [
        MetricDescription("lyceum_uptime_seconds", .gauge, "Seconds since the process started."),
        MetricDescription("lyceum_requests_total", .counter, "Requests handled by this process's workers, by service and operation."),
        MetricDescription("lyceum_request_duration_seconds", .histogram, "Time to answer a request in a worker, by service and operation."),
        MetricDescription("lyceum_request_errors_total", .counter, "Error replies, by service and error code."),
        MetricDescription("lyceum_journal_appends_total", .counter, "Records appended to the journal since start."),
        MetricDescription("lyceum_journal_syncs_total", .counter, "fdatasync calls made by the journal since start."),
        MetricDescription("lyceum_journal_sync_duration_seconds", .histogram, "Time one fdatasync of the journal took."),
        MetricDescription("lyceum_journal_bytes", .gauge, "Size of the journal file in bytes."),
        MetricDescription("lyceum_journal_last_sequence", .gauge, "Sequence number of the journal's last record."),
        MetricDescription(
            "lyceum_journal_write_failures_total", .counter,
            "Records refused because the journal's write failed (rolled back), by reason: full (no space left) or io."),
        MetricDescription("lyceum_events_published_total", .counter, "Progress events given a sequence number by this process's publisher."),
        MetricDescription("lyceum_events_dropped_total", .counter, "Of those, events dropped because the publisher's queue was full."),
        MetricDescription("lyceum_event_snapshots_total", .counter, "Snapshot requests (pages) answered by this process's publisher."),
        MetricDescription(
            "lyceum_event_snapshots_dropped_total", .counter,
            "Snapshot requests dropped unanswered because the peer left its earlier replies unread, or was gone."),
        MetricDescription(
            "lyceum_replica_leader", .gauge,
            "1 while this node leads the replicated partition and serves it, 0 while it follows, recovers or campaigns."),
        MetricDescription(
            "lyceum_replica_epoch", .gauge, "The epoch this replica of the partition leads in, or the highest it adopted while following."),
        MetricDescription(
            "lyceum_replica_lag_records", .gauge,
            "At the leader, per follower: records of the leader's journal the follower has not acknowledged durable."),
        MetricDescription(
            "lyceum_replica_lag_bytes", .gauge,
            "At the leader, per follower: bytes of those records in the leader's journal."),
        MetricDescription(
            "lyceum_replica_commit_wait_seconds", .histogram,
            "At the leader: time from a write's append to a majority of the replica set having it durable."),
        MetricDescription(
            "lyceum_replication_appends_sent_total", .counter,
            "Appends carrying records sent by this process's leaders to their followers (heartbeats aside)."),
        MetricDescription("lyceum_replication_records_sent_total", .counter, "Records those appends carried."),
        MetricDescription("lyceum_broker_workers", .gauge, "Workers registered with the broker, by service."),
        MetricDescription("lyceum_broker_queued_requests", .gauge, "Requests queued in the broker for a worker, by service."),
        MetricDescription("lyceum_broker_connected_workers", .gauge, "Workers registered with the broker, all services."),
        MetricDescription("lyceum_broker_connections", .gauge, "TCP connections the broker holds."),
        MetricDescription(
            "lyceum_broker_unregistered_queued_requests", .gauge,
            "Requests queued for service names no worker has registered, all such names together."),
        MetricDescription(
            "lyceum_broker_connections_cut_total", .counter,
            "Connections the broker cut: beyond max-connections (limit), over max-input-bytes (input) or max-output-bytes (output)."),
        MetricDescription(
            "lyceum_broker_rejections_total", .counter,
            "Requests the broker refused with an error reply instead of routing them, by code (queue_full, overloaded, …)."),
        MetricDescription(
            "lyceum_worker_reconnect_backoff_seconds", .gauge,
            "The wait before a worker's last lost session at a broker reconnects; 0 once the broker accepts one again."),
        MetricDescription("lyceum_key_reloads_total", .counter, "Reloads of authorized-keys on SIGHUP, by result (succeeded, failed)."),
        MetricDescription(
            "lyceum_backup_last_success_timestamp_seconds", .gauge,
            "Unix time at which the last backup a client copied whole ended (lyceum backup); alert when it grows old."),
        MetricDescription("lyceum_backup_bytes", .gauge, "Size in bytes of the last successful backup's snapshots."),
        MetricDescription("lyceum_backup_duration_seconds", .gauge, "Seconds the last successful backup took, from begin to end."),
        MetricDescription("lyceum_backups_total", .counter, "Backups ended, by outcome: complete, or incomplete (failed, ended early, abandoned)."),
    ]
}
