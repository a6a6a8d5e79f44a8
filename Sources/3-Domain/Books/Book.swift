import JSON

/// One book in a learner's library, as stored and as returned.
public struct Book: Sendable, Equatable {
    /// Server-assigned UUID, lowercase.
    public let id: String
    /// The owner's learner id.
    public let learner: String
    /// Not blank, within `titleLimit`.
    public var title: String
    /// Not blank, within `authorLimit`.
    public var author: String
    /// One of the seven genres.
    public var genre: Genre
    /// Stars, 1 through 5.
    public var rating: Int
    /// Free text, possibly empty, within `reviewLimit`.
    public var review: String
    /// 1 on creation, +1 on each update.
    public var version: Int
    /// Milliseconds since 1970 (UTC).
    public let createdAt: Int64
    /// Milliseconds since 1970 (UTC).
    public var updatedAt: Int64

    /// A book with exactly these fields; validation is the job of `BookDraft` and `BookPatch`.
    public init(
        id: String, learner: String, title: String, author: String, genre: Genre, rating: Int, review: String,
        version: Int, createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.learner = learner
        self.title = title
        self.author = author
        self.genre = genre
        self.rating = rating
        self.review = review
        self.version = version
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

extension Book {
    /// Longest title accepted: 200 characters (and 800 Unicode scalars, 1,600 UTF-8 bytes).
    public static let titleLimit = TextLimit(characters: 0...200)
    /// Longest author accepted: 120 characters (and 480 Unicode scalars, 960 UTF-8 bytes).
    public static let authorLimit = TextLimit(characters: 0...120)
    /// Longest review accepted: 4,000 characters (and 16,000 Unicode scalars, 32,000 UTF-8 bytes).
    public static let reviewLimit = TextLimit(characters: 0...4_000)
    /// The accepted star ratings.
    public static let ratings = 1...5

    /// Checks a title: within `titleLimit`, not blank.
    public static func validateTitle(_ title: String) throws(BookError) {
        try validateText(title, field: "title", limit: titleLimit, allowBlank: false)
    }

    /// Checks an author: within `authorLimit`, not blank.
    public static func validateAuthor(_ author: String) throws(BookError) {
        try validateText(author, field: "author", limit: authorLimit, allowBlank: false)
    }

    /// Checks a review: within `reviewLimit`, may be empty.
    public static func validateReview(_ review: String) throws(BookError) {
        try validateText(review, field: "review", limit: reviewLimit, allowBlank: true)
    }

    /// Checks a rating is within `ratings`.
    public static func validateRating(_ rating: Int) throws(BookError) {
        guard ratings.contains(rating) else {
            throw BookError(.invalidField, field: "rating", "must be between \(ratings.lowerBound) and \(ratings.upperBound)")
        }
    }

    /// The genre spelled `name`, or an error listing the accepted spellings.
    public static func genre(named name: String, field: String = "genre") throws(BookError) -> Genre {
        guard let genre = Genre(rawValue: name) else {
            throw BookError(.invalidField, field: field, "must be one of \(Genre.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return genre
    }

    // The limit comes first so that the blank check never walks more than the limit allows.
    private static func validateText(_ text: String, field: String, limit: TextLimit, allowBlank: Bool) throws(BookError) {
        if let violation = limit.violation(of: text) { throw BookError(.invalidField, field: field, violation) }
        if !allowBlank, !startsWithVisibleASCII(text), text.allSatisfy(\.isWhitespace) {
            throw BookError(.invalidField, field: field, "must not be empty")
        }
    }

    /// Whether `text` starts with a printable ASCII character other than the space: then it is
    /// not blank, which settles the check for nearly every title and author without walking
    /// the string's characters.
    private static func startsWithVisibleASCII(_ text: String) -> Bool {
        guard let first = text.utf8.first else { return false }
        return (0x21...0x7E).contains(first)
    }
}
