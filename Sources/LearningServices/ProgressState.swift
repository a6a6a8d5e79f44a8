import Journal
import Progress

/// Everything the progress service keeps: the records and the ledger of idempotent writes.
/// Replay the journal's changes into a fresh value with `apply`, then hand it to `ProgressService`.
public struct ProgressState: LedgeredState {
    public private(set) var records = ProgressRecords()
    public private(set) var ledger = RequestLedger(service: ProgressService.serviceName)

    public init() {}

    public mutating func apply(_ change: JournalChange) {
        switch change.collection {
        case ProgressRecords.collection: records.apply(change)
        case RequestLedger.collection: ledger.apply(change)
        default: break
        }
    }

    public func snapshot() -> [JournalChange] { records.snapshot() + ledger.snapshot() }
}
