import EventSubscription
import Telemetry

/// The publisher's counters in the process's metrics (docs/operations.md, "Status and metrics"), pushed as
/// `EventPublisher.Counters` change.
struct EventMetrics: Sendable {
    let published = Counter(label: "lyceum_events_published_total")
    let dropped = Counter(label: "lyceum_events_dropped_total")
    let snapshots = Counter(label: "lyceum_event_snapshots_total")
    let snapshotsDropped = Counter(label: "lyceum_event_snapshots_dropped_total")
}
