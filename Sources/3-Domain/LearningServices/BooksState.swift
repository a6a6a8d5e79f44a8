import Books
import Journal

/// Everything the books service keeps: the libraries and the ledger of idempotent writes.
/// Replay the journal's changes into a fresh value with `apply`, then hand it to `BooksService`.
public struct BooksState: LedgeredState {
    /// Every learner's books; replayed without their orders, each learner's sorted at the
    /// first list of that learner (`prepareList(of:)`), so that a restart pays for no order.
    public private(set) var library = BookLibrary.replaying()
    /// Replies of recent idempotent book writes.
    public private(set) var ledger = RequestLedger(service: BooksService.serviceName)

    /// The empty state, to replay the journal into.
    public init() {}

    /// Routes `books` and `requests` changes; ignores others.
    /// - Throws: `UndecodableValue` when the change's value does not decode; nothing changes then.
    public mutating func apply(_ change: JournalChange) throws(UndecodableValue) {
        switch change.collection {
        case BookLibrary.collection: try library.apply(change)
        case RequestLedger.collection: try ledger.apply(change)
        default: break
        }
    }

    /// Stores `book`, which `change` (a put `BookLibrary` planned) encodes, as applying `change`
    /// would, without decoding its payload.
    /// - Throws: what `apply(change)` throws; nothing changes then.
    mutating func store(_ book: Book, by change: JournalChange) throws(UndecodableValue) {
        try library.store(book, by: change)
    }

    /// Builds the orders of `learner`'s books if the replay deferred them: what a list needs
    /// first. O(n log n) in that learner's books, once after a restart; nothing after that.
    public mutating func prepareList(of learner: String) { library.prepareList(of: learner) }

    /// Changes that rebuild the books and the ledger.
    public func snapshot() -> [JournalChange] { library.snapshot() + ledger.snapshot() }

    /// The changes of `snapshot()`, the books' made one at a time (compaction walks these).
    public func forEachSnapshotChange(_ body: (JournalChange) throws -> Void) rethrows {
        try library.forEachSnapshotChange(body)
        for change in ledger.snapshot() { try body(change) }
    }
}
