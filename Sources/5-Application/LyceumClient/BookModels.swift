import JSON

/// A book's genre. A struct rather than an enum so that a genre a newer server adds still decodes.
public struct Genre: RawRepresentable, Hashable, Sendable {
    /// The genre as on the wire, e.g. `Fantasy`.
    public let rawValue: String
    /// Wraps a wire name.
    public init(rawValue: String) { self.rawValue = rawValue }

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
public struct Book: Equatable, Sendable {
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
public struct BookPage: Equatable, Sendable {
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

extension Book: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        id = try reply.string("id")
        title = try reply.string("title")
        author = try reply.string("author")
        genre = Genre(rawValue: try reply.string("genre"))
        rating = try reply.integer("rating")
        review = try reply.string("review")
        version = try reply.integer("version")
        createdAt = try reply.string("created_at")
        updatedAt = try reply.string("updated_at")
    }
}

extension BookPage: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        books = try reply.results("books")
        nextCursor = try reply.optionalString("next_cursor")
    }
}

/// The result of `create`, `get` and `update`: `{"book": …}`.
struct BookResult: ReplyResult {
    let book: Book
    init(reply: inout JSONObjectReader) throws(JSONReadError) { book = try reply.result("book") }
}

/// The result of `delete`: `{"deleted": id}`.
struct DeletedResult: ReplyResult {
    let deleted: String
    init(reply: inout JSONObjectReader) throws(JSONReadError) { deleted = try reply.string("deleted") }
}
