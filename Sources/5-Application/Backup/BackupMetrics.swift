import Foundation
import LyceumSupport
import Telemetry

/// What `lyceum.backup` records: when the last backup a client finished succeeded (so an alert
/// can fire when backups stop), its size and duration, and every backup's outcome.
struct BackupMetrics: Sendable {
    private let lastSuccess = Gauge(label: "lyceum_backup_last_success_timestamp_seconds")
    private let bytes = Gauge(label: "lyceum_backup_bytes")
    private let duration = Gauge(label: "lyceum_backup_duration_seconds")
    private let completed = Counter(label: "lyceum_backups_total", dimensions: [("outcome", "complete")])
    private let incomplete = Counter(label: "lyceum_backups_total", dimensions: [("outcome", "incomplete")])

    /// A backup the client copied whole: `bytes` of snapshots, `elapsed` from begin to end.
    func succeeded(bytes: UInt64, elapsed: Duration) {
        lastSuccess.record(Date().timeIntervalSince1970.rounded())
        self.bytes.record(bytes)
        duration.record(elapsed.seconds)
        completed.increment()
    }

    /// A backup that failed, was ended incomplete, or was abandoned.
    func failed() { incomplete.increment() }
}
