import Journal
import LyceumLogging

/// Every learner's books: a copy-on-write value built from journal changes in the `books`
/// collection, with pure functions that plan changes and a single `apply` that performs them.
/// Each learner's shelf keeps its books in every order a list offers, so that a page costs the
/// same in a library of ten books and of a hundred thousand (`BookShelf`).
public struct BookLibrary: JournalState, Sendable {
    /// The journal collection books live in; keys are `learner/id`.
    public static let collection = "books"

    private var shelves: [String: BookShelf] = [:]
    /// Whether new shelves keep no orders until their first list (`prepareList(of:)`): replay.
    private var defersIndexes = false
    /// Number of books across all learners.
    public private(set) var count = 0

    /// An empty library that keeps every order up to date from the first book on.
    public init() {}

    /// An empty library to replay a journal into: its shelves keep no orders until
    /// `prepareList(of:)` sorts them (a million books inserted one by one
    /// into four orders, each comparison reaching into books all over the heap, made a restart
    /// 8× slower; sorting every shelf at the end still added 75% to its CPU). A shelf cannot
    /// list before that.
    public static func replaying() -> BookLibrary {
        var library = BookLibrary()
        library.defersIndexes = true
        return library
    }

    /// Builds the orders of `learner`'s shelf if they were deferred, which `page(of:_:)` needs:
    /// O(n log n) in that learner's books, once; a shelf that keeps them is not touched (nor
    /// copied).
    public mutating func prepareList(of learner: String) {
        guard defersIndexes, shelves[learner]?.isIndexed == false else { return }
        shelves[learner]!.buildIndexes()
    }

    /// The book `id` of `learner`, if any.
    public func book(_ id: String, of learner: String) -> Book? {
        guard let key = BookID(id) else { return nil }
        return shelves[learner]?.book(key)?.book(learner: learner)
    }

    /// How many books `learner` keeps and the bytes of their titles, authors and reviews: what
    /// `LibraryLimits` bounds.
    public func holdings(of learner: String) -> (books: Int, contentBytes: Int) {
        shelves[learner].map { ($0.count, $0.contentBytes) } ?? (0, 0)
    }

    /// The book `id` of `learner` as the library holds it, if any: for writing its JSON.
    public func packedBook(_ id: String, of learner: String) -> PackedBook? {
        guard let key = BookID(id), let stored = shelves[learner]?.book(key) else { return nil }
        return PackedBook(stored: stored)
    }

    /// The change that adds a new book built from `draft`; `id` is a fresh UUID. Appends the
    /// new book's contract form (`Book.writeJSON(to:)`) to `json`, which the write's reply
    /// carries: both are written in one pass over the book.
    /// - Throws: `limitExceeded` when the library holds `limits.books` books already, or the
    ///   book's texts would take it past `limits.contentBytes`; nothing is appended then.
    public func creation(
        of draft: BookDraft, id: String, learner: String, now: Int64, limits: LibraryLimits, appendingJSONTo json: inout [UInt8]
    ) throws(BookError) -> (Book, JournalChange) {
        let held = holdings(of: learner)
        guard held.books < limits.books else {
            throw BookError(
                .limitExceeded,
                "the library of \(PeerText.excerpt(learner)) holds \(held.books) books, the most one learner may keep (max-books-per-learner \(limits.books)); delete one first")
        }
        try Self.check(contentBytes: held.contentBytes + draft.contentBytes, of: learner, against: limits)
        let book = Book(
            id: id, learner: learner, title: draft.title, author: draft.author, genre: draft.genre, rating: draft.rating,
            review: draft.review, version: 1, createdAt: now, updatedAt: now)
        return (book, .put(Self.collection, key: Self.key(learner, id), value: book.journalValue(appendingJSONTo: &json)))
    }

    /// The change that applies `patch` to book `id`, checking `expectedVersion` when given.
    /// Appends the updated book's contract form to `json`, as `creation` does; nothing when it throws.
    /// - Throws: `limitExceeded` when the book grows and its texts would take the library past
    ///   `limits.contentBytes` (an update that does not grow the library is always allowed).
    public func update(
        _ id: String, of learner: String, with patch: BookPatch, expectedVersion: Int?, now: Int64, limits: LibraryLimits,
        appendingJSONTo json: inout [UInt8]
    ) throws(BookError) -> (Book, JournalChange) {
        let current = try existing(id, of: learner, expectedVersion: expectedVersion)
        var book = patch.applied(to: current)
        let growth = book.contentBytes - current.contentBytes
        if growth > 0 { try Self.check(contentBytes: holdings(of: learner).contentBytes + growth, of: learner, against: limits) }
        book.version = current.version + 1
        book.updatedAt = now
        return (book, .put(Self.collection, key: Self.key(learner, id), value: book.journalValue(appendingJSONTo: &json)))
    }

    /// The change that deletes book `id`, checking `expectedVersion` when given.
    public func deletion(of id: String, of learner: String, expectedVersion: Int?) throws(BookError) -> JournalChange {
        _ = try existing(id, of: learner, expectedVersion: expectedVersion)
        return .delete(Self.collection, key: Self.key(learner, id))
    }

    /// One page of `learner`'s books selected and ordered by `query`: a seek in the shelf's
    /// index of `query.sort` and a walk of at most `BookQuery.maxScanned` books, whatever the
    /// library's size.
    /// - Throws: `invalidField` (`cursor`) for a cursor of another listing.
    public func page(of learner: String, _ query: BookQuery) throws(BookError) -> BookPage {
        let after = try query.cursor.map { (cursor) throws(BookError) in
            try BookPosition(cursor: cursor, sort: query.sort, descending: query.descending)
        }
        guard let shelf = shelves[learner] else {
            return BookPage(books: [], positions: [], resume: nil, sort: query.sort, descending: query.descending)
        }
        return shelf.page(query, after: after, learner: learner)
    }

    /// `learner`'s books in the order of `sort` (ties by id), as the shelf's index holds them:
    /// for checks and tests, O(n).
    public func ordered(of learner: String, by sort: BookSortKey) -> [Book] {
        shelves[learner]?.ordered(by: sort).map { $0.book(learner: learner) } ?? []
    }

    /// Applies a `books` change; changes of other collections are ignored.
    /// - Throws: `UndecodableValue` for a put whose value is not a book this build reads, or a
    ///   key that names no book; the library is unchanged then.
    public mutating func apply(_ change: JournalChange) throws(UndecodableValue) {
        guard change.collection == Self.collection else { return }
        guard let value = change.value else {
            guard let slash = change.key.lastIndex(of: "/"),
                  let id = BookID(String(change.key[change.key.index(after: slash)...]))
            else { throw UndecodableValue(change, .malformed("the key is not learner/book-id")) }
            let learner = String(change.key[..<slash])
            if shelves[learner]?.remove(id) == true {
                count -= 1
                if shelves[learner]?.count == 0 { shelves[learner] = nil }
            }
            return
        }
        // A put's payload names its learner and id (the key is derived from them on write), so
        // replay does not split every key into new strings. Payloads this build wrote go
        // straight into their stored form; others are decoded generally, which names any fault.
        if let (learner, _, stored) = StoredBook.decoded(journalValue: value) {
            insert(stored, learner: learner)
            return
        }
        let book: Book
        do throws(ValueDecodingError) { book = try Book(journalValue: value) } catch { throw UndecodableValue(change, error) }
        guard let id = BookID(book.id) else { throw UndecodableValue(change, .malformed("the id \"\(book.id)\" is not a book id")) }
        insert(StoredBook(book, id: id), learner: book.learner)
    }

    /// Stores `book`, whose put `change` is (as `creation` or `update` planned it), leaving the
    /// library exactly as `apply(change)` would but without decoding the payload it was just
    /// encoded into: the write path keeps the `Book` it planned.
    /// - Throws: what `apply(change)` throws, for a book whose id is no book id; nothing
    ///   changes then.
    public mutating func store(_ book: Book, by change: JournalChange) throws(UndecodableValue) {
        guard let id = BookID(book.id) else { return try apply(change) }
        insert(StoredBook(book, id: id), learner: book.learner)
    }

    private mutating func insert(_ stored: StoredBook, learner: String) {
        if shelves[learner, default: BookShelf(indexed: !defersIndexes)].put(stored) { count += 1 }
    }

    private static func check(contentBytes: Int, of learner: String, against limits: LibraryLimits) throws(BookError) {
        guard contentBytes <= limits.contentBytes else {
            throw BookError(
                .limitExceeded,
                "the library of \(PeerText.excerpt(learner)) would hold \(contentBytes) bytes of titles, authors and reviews, more than one learner may keep (max-library-bytes \(limits.contentBytes))")
        }
    }

    /// One put per book.
    public func snapshot() -> [JournalChange] {
        var changes: [JournalChange] = []
        changes.reserveCapacity(count)
        forEachSnapshotChange { changes.append($0) }
        return changes
    }

    /// One put per book, each made when `body` takes it, so that a compaction never holds the
    /// payloads of the whole library at once.
    public func forEachSnapshotChange(_ body: (JournalChange) throws -> Void) rethrows {
        for (learner, shelf) in shelves {
            try shelf.forEach { stored in
                let book = stored.book(learner: learner)
                try body(.put(Self.collection, key: Self.key(learner, book.id), value: book.journalValue()))
            }
        }
    }

    private func existing(_ id: String, of learner: String, expectedVersion: Int?) throws(BookError) -> Book {
        guard let book = book(id, of: learner) else {
            throw BookError(.notFound, field: "id", "no book \(PeerText.excerpt(id)) in the library of \(PeerText.excerpt(learner))")
        }
        if let expectedVersion, expectedVersion != book.version {
            throw BookError(.versionConflict, field: "expected_version", "the book is at version \(book.version), not \(expectedVersion)")
        }
        return book
    }

    private static func key(_ learner: String, _ id: String) -> String { learner + "/" + id }
}
