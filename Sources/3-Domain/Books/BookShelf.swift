import LyceumSupport

/// One learner's books, kept in every order a list offers (issue 40): a page costs a seek,
/// O(log n), and a walk over the books it looks at, bounded by `BookQuery.maxScanned`, never a
/// sort of the whole library.
///
/// Each book sits in a slot of `books`; `slots` finds a book's slot by id (`SlotTable`), and
/// each order is an `OrderedIndex` of slot numbers (4 bytes a book an order) compared through
/// the books they name. A deleted book's slot is reused by the next one stored.
///
/// A shelf being replayed keeps no orders (`indexed: false`): inserting a million books one by
/// one, each order's comparisons reaching into books scattered over the heap, made a restart
/// eight times slower. `buildIndexes()` then sorts each order once from keys read in one pass,
/// at the shelf's first list.
struct BookShelf: Sendable {
    private var slots = SlotTable()
    /// The books by slot; a free slot holds `StoredBook.vacant`.
    private var books: [StoredBook] = []
    private var freeSlots: [UInt32] = []
    /// One index per `BookSortKey`, in `allCases` order; `nil` until `buildIndexes()` on a
    /// shelf made without them.
    private var orders: [OrderedIndex<UInt32>]?
    /// The UTF-8 bytes of every book's title, author and review: what `LibraryLimits` bounds.
    private(set) var contentBytes = 0

    /// How many books the shelf holds.
    var count: Int { slots.count }

    /// Whether the shelf keeps its orders (and can list).
    var isIndexed: Bool { orders != nil }

    /// An empty shelf that keeps its orders from the first book on, or (for replay) only once
    /// `buildIndexes()` is called.
    init(indexed: Bool) {
        if indexed { orders = [OrderedIndex<UInt32>](repeating: OrderedIndex(), count: BookSortKey.allCases.count) }
    }

    /// Builds the orders of a shelf made without them: for each, every book's key read once
    /// (an exact key for rating and creation time, the sort key's first sixteen bytes for
    /// texts), sorted, and only ties of those bytes compared in the books themselves.
    mutating func buildIndexes() {
        guard orders == nil else { return }
        // (key words, key length capped at 17, id, slot): sorting these needs no book, except
        // for texts whose keys agree on sixteen bytes and both run longer.
        var entries: [(key: (UInt64, UInt64, UInt64), high: UInt64, low: UInt64, slot: UInt32)] = []
        entries.reserveCapacity(count)
        orders = BookSortKey.allCases.map { sort in
            entries.removeAll(keepingCapacity: true)
            for (slot, book) in books.enumerated() where !book.isVacant {
                let id = book.id
                switch sort {
                case .title, .author:
                    let (first, second, length) = book.keyPrefix(sort)
                    entries.append(((first, second, UInt64(min(length, 17))), id.high, id.low, UInt32(slot)))
                case .rating: entries.append(((UInt64(book.rating), 0, 0), id.high, id.low, UInt32(slot)))
                case .created: entries.append(((UInt64(bitPattern: book.createdAt) ^ (1 << 63), 0, 0), id.high, id.low, UInt32(slot)))
                }
            }
            let table = books
            entries.sort { lhs, rhs in
                if lhs.key != rhs.key { return lhs.key < rhs.key }
                if lhs.key.2 == 17 { return table[Int(lhs.slot)].precedes(table[Int(rhs.slot)], by: sort) }
                return (lhs.high, lhs.low) < (rhs.high, rhs.low)
            }
            return OrderedIndex(sorted: entries.map(\.slot))
        }
    }

    /// The book `id`, if the shelf holds it.
    func book(_ id: BookID) -> StoredBook? {
        slots.slot(of: id, in: books).map { books[Int($0)] }
    }

    /// Stores `book`, replacing the one with its id; true when it was not there before.
    @discardableResult
    mutating func put(_ book: StoredBook) -> Bool {
        if let slot = slots.slot(of: book.id, in: books) {
            unindex(slot)
            contentBytes -= books[Int(slot)].contentBytes
            books[Int(slot)] = book
            contentBytes += book.contentBytes
            index(slot)
            return false
        }
        let slot: UInt32
        if let free = freeSlots.popLast() {
            slot = free
            books[Int(slot)] = book
        } else {
            slot = UInt32(books.count)
            books.append(book)
        }
        slots.insert(slot, in: books)
        contentBytes += book.contentBytes
        index(slot)
        return true
    }

    /// Removes the book `id`; true when the shelf held it.
    @discardableResult
    mutating func remove(_ id: BookID) -> Bool {
        guard let slot = slots.remove(id, in: books) else { return false }
        unindex(slot)
        contentBytes -= books[Int(slot)].contentBytes
        books[Int(slot)] = .vacant
        freeSlots.append(slot)
        return true
    }

    /// Calls `body` with every book, in no particular order.
    func forEach(_ body: (StoredBook) throws -> Void) rethrows {
        for book in books where !book.isVacant { try body(book) }
    }

    /// The books `query` selects after `after` (from the start without it), in its order: at
    /// most `limit` of them, from at most `BookQuery.maxScanned` books looked at, with where the
    /// next page resumes when books may follow.
    func page(_ query: BookQuery, after: BookPosition?, learner: String) -> BookPage {
        let order = indexed[Self.order(query.sort)]
        let sort = query.sort
        let limit = max(1, min(query.limit, BookQuery.maxLimit))
        let author = query.author?.lowercased()
        // A minimum rating listed by rating is a range of the index, not a filter: the walk
        // starts at it (ascending) or ends at it (descending).
        let ratingFloor = sort == .rating ? query.minRating : nil
        let walk: AnySequence<UInt32>
        if query.descending {
            let end = after.map { after in order.firstPosition { books[Int($0)].compare(to: after, by: sort) >= 0 } } ?? order.endPosition
            walk = AnySequence(order.elements(before: end))
        } else {
            let start = order.firstPosition { slot in
                let book = books[Int(slot)]
                if let after, book.compare(to: after, by: sort) <= 0 { return false }
                return ratingFloor.map { book.rating >= $0 } ?? true
            }
            walk = AnySequence(order.elements(from: start))
        }
        var selected: [StoredBook] = []
        var scanned = 0
        var last: StoredBook?
        var exhausted = true
        for slot in walk {
            let book = books[Int(slot)]
            if query.descending, let ratingFloor, book.rating < ratingFloor { break }
            if selected.count == limit || scanned == BookQuery.maxScanned {
                exhausted = false
                break
            }
            scanned += 1
            last = book
            if let genre = query.genre, book.genre != genre { continue }
            if let minRating = query.minRating, book.rating < minRating { continue }
            if let author, !book.hasAuthor(lowercased: author) { continue }
            selected.append(book)
        }
        // A full page resumes after its last book; a page whose scan reached its bound, after
        // the last book looked at, which the filters may have passed over.
        return BookPage(
            books: selected.map { $0.book(learner: learner) }, positions: selected.map { $0.position(by: sort) },
            resume: exhausted ? nil : last?.position(by: sort), sort: sort,
            descending: query.descending)
    }

    /// Every order, as the index holds it: for checks and tests.
    func ordered(by sort: BookSortKey) -> [StoredBook] {
        indexed[Self.order(sort)].elements.map { books[Int($0)] }
    }

    /// The orders, which a shelf that lists must have (`BookLibrary` builds them before any page).
    private var indexed: [OrderedIndex<UInt32>] {
        guard let orders else { preconditionFailure("a shelf listed before its orders were built") }
        return orders
    }

    private mutating func index(_ slot: UInt32) {
        updateOrders { order, precedes in order.insert(slot, by: precedes) }
    }

    private mutating func unindex(_ slot: UInt32) {
        updateOrders { order, precedes in
            let place = order.firstPosition { !precedes($0, slot) }
            precondition(place != order.endPosition && order[place] == slot, "a book missing from one of its orders")
            order.remove(at: place)
        }
    }

    // Each comparison reads two books that a large library rarely has in the cache, and retains
    // them: about 25 us of server CPU a create into a 10,000-book library (perf: swift_retain
    // 20% of it; reading them through the table's pointer instead kept the retains). Keys of
    // plain values per slot would avoid both, at about 48 bytes a book (issue 40's closing note).

    /// Calls `change` with each order the shelf keeps (none before `buildIndexes()`) and that
    /// order's comparison of two slots' books.
    private mutating func updateOrders(_ change: (inout OrderedIndex<UInt32>, _ precedes: (UInt32, UInt32) -> Bool) -> Void) {
        guard orders != nil else { return }
        let table = books
        for sort in BookSortKey.allCases {
            change(&orders![Self.order(sort)]) { table[Int($0)].precedes(table[Int($1)], by: sort) }
        }
    }

    private static func order(_ sort: BookSortKey) -> Int {
        switch sort {
        case .title: 0
        case .author: 1
        case .rating: 2
        case .created: 3
        }
    }
}
