import Foundation
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

/// One page of books and the cursor of the next page (`nil` on the last page).
public struct BookPage: Sendable, Equatable {
    /// The page's books in order.
    public let books: [Book]
    /// The cursor of the next page, `nil` on the last.
    public let nextCursor: String?
}

/// A position in a sorted list: the sort value and id of the last book of a page. The wire
/// form is opaque (hex of a small JSON array) and names the ordering it belongs to, so that
/// stable paging survives inserts and deletes between pages.
struct BookPosition: Comparable {
    enum Value: Comparable {
        case text(String)
        case number(Int)
    }

    let value: Value
    let id: String

    init(_ book: Book, sort: BookSortKey) {
        switch sort {
        case .title: value = .text(BookPosition.fold(book.title))
        case .author: value = .text(BookPosition.fold(book.author))
        case .rating: value = .number(book.rating)
        case .created: value = .number(Int(book.createdAt))
        }
        id = book.id
    }

    init(value: Value, id: String) {
        self.value = value
        self.id = id
    }

    /// Text sorts ignoring case and diacritics, so that "Émile" files under E.
    static func fold(_ text: String) -> String {
        // Lists fold every book on every request: ASCII, the common case, needs no Foundation.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    static func < (lhs: BookPosition, rhs: BookPosition) -> Bool { (lhs.value, lhs.id) < (rhs.value, rhs.id) }

    func cursor(sort: BookSortKey, descending: Bool) -> String {
        let encodedValue: JSONValue = switch value {
        case .text(let text): .string(text)
        case .number(let number): .integer(number)
        }
        let array: JSONValue = [.string(sort.rawValue), .bool(descending), encodedValue, .string(id)]
        let hex = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        for byte in array.serialized() {
            output.append(hex[Int(byte >> 4)])
            output.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    init(cursor: String, sort: BookSortKey, descending: Bool) throws(BookError) {
        let invalid = BookError(.invalidField, field: "cursor", "is not a cursor of this listing")
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in cursor.utf8 {
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            default: throw invalid
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        guard high == nil,
            case .success(.array(let parts)) = Result(catching: { () throws(JSONParseError) in try JSONParser(maxBytes: 4096).parse(bytes) }),
            parts.count == 4, parts[0] == .string(sort.rawValue), parts[1] == .bool(descending),
            case .string(let id) = parts[3]
        else { throw invalid }
        switch parts[2] {
        case .string(let text): self.init(value: .text(text), id: id)
        case .integer(let number): self.init(value: .number(number), id: id)
        default: throw invalid
        }
    }
}
