import JSON

/// What a book list is ordered by.
public enum BookSortKey: String, Sendable, CaseIterable {
    case title, author, rating, created
}

/// One page request over a learner's library: order, filters, size and where to continue.
public struct BookQuery: Sendable {
    /// The ordering; ties are broken by id.
    public var sort: BookSortKey
    /// Whether the order is reversed (ties too).
    public var descending: Bool
    /// Only books of this genre, when set.
    public var genre: Genre?
    /// Matches the author case-insensitively and exactly.
    public var author: String?
    /// Only books rated at least this, when set.
    public var minRating: Int?
    /// Books per page, clamped to `1...maxLimit`.
    public var limit: Int
    /// The `nextCursor` of the previous page, or `nil` for the first page.
    public var cursor: String?

    /// The most books one page holds.
    public static let maxLimit = 100
    /// The most books one page looks at, however large the library: with a filter, a page may
    /// therefore hold fewer than `limit` books (even none) and still return a cursor (issue 40).
    /// Looking at a book costs a few dozen nanoseconds, so a page costs well under a millisecond.
    public static let maxScanned = 4_096
    /// The longest cursor accepted, in characters: a cursor carries a title or author sort key
    /// of up to 512 bytes, which JSON escapes and hex can make twelve times longer.
    public static let maxCursorLength = 8 * 1024

    /// A query; the defaults list the first 20 books in creation order.
    public init(
        sort: BookSortKey = .created, descending: Bool = false, genre: Genre? = nil, author: String? = nil,
        minRating: Int? = nil, limit: Int = 20, cursor: String? = nil
    ) {
        self.sort = sort
        self.descending = descending
        self.genre = genre
        self.author = author
        self.minRating = minRating
        self.limit = limit
        self.cursor = cursor
    }
}

/// One page of books and the cursor of the next page (`nil` on the last).
public struct BookPage: Sendable, Equatable {
    /// The page's books in order.
    public let books: [Book]
    /// The cursor of the next page, `nil` on the last.
    public let nextCursor: String?
    let positions: [BookPosition]
    let sort: BookSortKey
    let descending: Bool

    /// A page of `books` at `positions`, whose next page starts after `resume` (`nil`: none
    /// follows). A page whose scan stopped at its bound resumes after the last book it looked
    /// at, which need not be one it holds.
    init(books: [Book], positions: [BookPosition], resume: BookPosition?, sort: BookSortKey, descending: Bool) {
        self.books = books
        self.positions = positions
        self.sort = sort
        self.descending = descending
        nextCursor = resume?.cursor(sort: sort, descending: descending)
    }

    /// The page cut to its first `count` books (at least one), continuing after the last of
    /// them: how a reply that reached its byte budget still lets the client go on.
    public func prefix(_ count: Int) -> BookPage {
        let kept = max(1, count)
        guard kept < books.count else { return self }
        return BookPage(
            books: Array(books.prefix(kept)), positions: Array(positions.prefix(kept)), resume: positions[kept - 1], sort: sort,
            descending: descending)
    }
}

/// A place in a sorted list: a book's sort value and id. The wire form is an opaque
/// `PageCursor` that names the ordering it belongs to, so that stable paging survives inserts
/// and deletes between pages.
struct BookPosition: Sendable, Equatable {
    enum Value: Sendable, Equatable {
        case text(TextSortKey)
        case number(Int)
    }

    let value: Value
    let id: BookID
    /// The id as the cursor spells it (as the journal did).
    let idText: String

    func cursor(sort: BookSortKey, descending: Bool) -> String {
        // A key is whole scalars of valid UTF-8, so it travels as a JSON string unchanged.
        let encodedValue: JSONValue = switch value {
        case .text(let key): .string(String(decoding: key.bytes, as: UTF8.self))
        case .number(let number): .integer(number)
        }
        return PageCursor.encode([.string(sort.rawValue), .bool(descending), encodedValue, .string(idText)])
    }

    init(value: Value, id: BookID, idText: String) {
        self.value = value
        self.id = id
        self.idText = idText
    }

    init(cursor: String, sort: BookSortKey, descending: Bool) throws(BookError) {
        let invalid = BookError(.invalidField, field: "cursor", "is not a cursor of this listing")
        guard let parts = PageCursor.decode(cursor), parts.count == 4, parts[0] == .string(sort.rawValue), parts[1] == .bool(descending),
            case .string(let idText) = parts[3], let id = BookID(idText)
        else { throw invalid }
        switch (sort, parts[2]) {
        case (.title, .string(let text)), (.author, .string(let text)):
            self.init(value: .text(TextSortKey(bytes: Array(text.utf8))), id: id, idText: idText)
        case (.rating, .integer(let number)), (.created, .integer(let number)):
            self.init(value: .number(number), id: id, idText: idText)
        default: throw invalid
        }
    }
}
