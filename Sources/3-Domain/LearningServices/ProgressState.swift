import Journal
import Progress

/// Everything the progress service keeps: the records and the ledger of idempotent writes.
/// Replay the journal's changes into a fresh value with `apply`, then hand it to `ProgressService`.
public struct ProgressState: LedgeredState {
    /// Every learner's progress records and the course aggregates.
    public private(set) var records = ProgressRecords()
    /// Replies of recent idempotent progress writes.
    public private(set) var ledger = RequestLedger(service: ProgressService.serviceName)

    /// The empty state, to replay the journal into.
    public init() {}

    /// Routes `progress` and `requests` changes; ignores others.
    /// - Throws: `UndecodableValue` when the change's value does not decode; nothing changes then.
    public mutating func apply(_ change: JournalChange) throws(UndecodableValue) {
        switch change.collection {
        case ProgressRecords.collection: try records.apply(change)
        case RequestLedger.collection: try ledger.apply(change)
        default: break
        }
    }

    /// Stores `record`, which a `progress` put the records planned encodes, as applying that
    /// put would, without decoding it.
    mutating func store(_ record: CourseProgress) { records.store(record) }

    /// Changes that rebuild the records and the ledger.
    public func snapshot() -> [JournalChange] { records.snapshot() + ledger.snapshot() }
}
