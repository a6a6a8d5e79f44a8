import Telemetry

/// The journal's series in the process's metrics (docs/operations.md, "Status and metrics"), labelled with
/// `JournalOptions.metricDimensions`: pushed on open, on every append and sync, and after a
/// compaction, so that an exporter only renders them.
struct JournalMetrics: Sendable {
    private let appends: Counter
    private let syncs: Counter
    private let syncDuration: Timer
    private let bytes: Gauge
    private let lastSequence: Gauge
    private let fullFailures: Counter
    private let otherFailures: Counter

    init(dimensions: [(String, String)]) {
        appends = Counter(label: "lyceum_journal_appends_total", dimensions: dimensions)
        syncs = Counter(label: "lyceum_journal_syncs_total", dimensions: dimensions)
        syncDuration = Timer(label: "lyceum_journal_sync_duration_seconds", dimensions: dimensions)
        bytes = Gauge(label: "lyceum_journal_bytes", dimensions: dimensions)
        lastSequence = Gauge(label: "lyceum_journal_last_sequence", dimensions: dimensions)
        fullFailures = Counter(label: "lyceum_journal_write_failures_total", dimensions: dimensions + [("reason", "full")])
        otherFailures = Counter(label: "lyceum_journal_write_failures_total", dimensions: dimensions + [("reason", "io")])
    }

    /// A record could not be written (and was rolled back): `full` when the file system is out
    /// of space, so that a full disk shows apart from other write errors.
    func writeFailed(full: Bool) {
        (full ? fullFailures : otherFailures).increment()
    }

    /// The file now ends at `size` bytes after record `sequence`.
    func file(size: UInt64, lastSequence sequence: UInt64) {
        bytes.record(size)
        lastSequence.record(sequence)
    }

    /// One record more was appended.
    func appended() { appends.increment() }

    /// One `fdatasync` more was made, which took `duration` (what every write it covered waited
    /// for, beside its own queueing).
    func synced(in duration: Duration) {
        syncs.increment()
        syncDuration.record(duration)
    }
}
