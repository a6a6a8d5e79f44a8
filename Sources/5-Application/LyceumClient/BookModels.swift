/// A book's genre. A struct rather than an enum so that a genre a newer server adds still decodes.
public struct Genre: RawRepresentable, Codable, Hashable, Sendable {
    /// The genre as on the wire, e.g. `Fantasy`.
    public let rawValue: String
    /// Wraps a wire name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Reads the wire name.
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    /// Writes the wire name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// `Fantasy`.
    public static let fantasy = Genre(rawValue: "Fantasy")
    /// `Horror`.
    public static let horror = Genre(rawValue: "Horror")
    /// `Kids`.
    public static let kids = Genre(rawValue: "Kids")
    /// `Mystery`.
    public static let mystery = Genre(rawValue: "Mystery")
    /// `Poetry`.
    public static let poetry = Genre(rawValue: "Poetry")
    /// `Romance`.
    public static let romance = Genre(rawValue: "Romance")
    /// `Thriller`.
    public static let thriller = Genre(rawValue: "Thriller")
}

/// A book in a learner's library, as the `books` service returns it.
public struct Book: Decodable, Equatable, Sendable {
    /// A lowercase UUID assigned by the server.
    public let id: String
    /// The title.
    public let title: String
    /// The author.
    public let author: String
    /// The genre.
    public let genre: Genre
    /// 1 to 5.
    public let rating: Int
    /// The learner's review; empty when none was given.
    public let review: String
    /// 1 when created, one more after each update.
    public let version: Int
    /// RFC 3339 UTC time of creation, with milliseconds.
    public let createdAt: String
    /// RFC 3339 UTC time of the last change.
    public let updatedAt: String
}

/// One page of a learner's books.
public struct BookPage: Decodable, Equatable, Sendable {
    /// The books of this page.
    public let books: [Book]
    /// Pass it back as `cursor` (with the same filters and order) for the next page; `nil` on the last.
    public let nextCursor: String?
}

/// What `books list` sorts by.
public enum BookSort: String, Sendable {
    /// By title, ignoring case and diacritics.
    case title
    /// By author, ignoring case and diacritics.
    case author
    /// By rating.
    case rating
    /// By creation time (the server's default).
    case created
}

/// Ascending or descending.
public enum SortOrder: String, Sendable {
    /// Smallest first.
    case ascending = "asc"
    /// Largest first.
    case descending = "desc"
}

struct BookResult: Decodable { let book: Book }
struct DeletedResult: Decodable { let deleted: String }
