import Books
import Journal

/// Everything the books service keeps: the libraries and the ledger of idempotent writes.
/// Replay the journal's changes into a fresh value with `apply`, then hand it to `BooksService`.
public struct BooksState: LedgeredState {
    public private(set) var library = BookLibrary()
    public private(set) var ledger = RequestLedger(service: BooksService.serviceName)

    public init() {}

    public mutating func apply(_ change: JournalChange) {
        switch change.collection {
        case BookLibrary.collection: library.apply(change)
        case RequestLedger.collection: ledger.apply(change)
        default: break
        }
    }

    public func snapshot() -> [JournalChange] { library.snapshot() + ledger.snapshot() }
}
