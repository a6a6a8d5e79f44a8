/// The fields of a new book, validated on construction.
public struct BookDraft: Sendable, Equatable {
    /// The title, validated.
    public let title: String
    /// The author, validated.
    public let author: String
    /// The genre.
    public let genre: Genre
    /// Stars, 1 through 5.
    public let rating: Int
    /// The review, possibly empty.
    public let review: String

    /// Validates every field; throws `invalidField` naming the first bad one.
    public init(title: String, author: String, genre: Genre, rating: Int, review: String = "") throws(BookError) {
        try Book.validateTitle(title)
        try Book.validateAuthor(author)
        try Book.validateRating(rating)
        try Book.validateReview(review)
        self.title = title
        self.author = author
        self.genre = genre
        self.rating = rating
        self.review = review
    }
}

/// A partial update: `nil` leaves a field as it is. Validated on construction.
public struct BookPatch: Sendable, Equatable {
    /// The new title, or `nil` to keep it.
    public let title: String?
    /// The new author, or `nil` to keep it.
    public let author: String?
    /// The new genre, or `nil` to keep it.
    public let genre: Genre?
    /// The new rating, or `nil` to keep it.
    public let rating: Int?
    /// The new review, or `nil` to keep it.
    public let review: String?

    /// Validates the given fields; throws when one is bad or none is given.
    public init(title: String? = nil, author: String? = nil, genre: Genre? = nil, rating: Int? = nil, review: String? = nil) throws(BookError) {
        if let title { try Book.validateTitle(title) }
        if let author { try Book.validateAuthor(author) }
        if let rating { try Book.validateRating(rating) }
        if let review { try Book.validateReview(review) }
        guard title != nil || author != nil || genre != nil || rating != nil || review != nil else {
            throw BookError(.invalidField, "an update must change at least one of title, author, genre, rating, review")
        }
        self.title = title
        self.author = author
        self.genre = genre
        self.rating = rating
        self.review = review
    }

    /// `book` with this patch's fields applied (version and clock untouched).
    func applied(to book: Book) -> Book {
        var result = book
        if let title { result.title = title }
        if let author { result.author = author }
        if let genre { result.genre = genre }
        if let rating { result.rating = rating }
        if let review { result.review = review }
        return result
    }
}

extension BookDraft {
    /// The UTF-8 bytes of title, author and review: what the book adds to its library's byte limit.
    var contentBytes: Int { title.utf8.count + author.utf8.count + review.utf8.count }
}

extension Book {
    /// The UTF-8 bytes of title, author and review: what the book takes of its library's byte limit.
    var contentBytes: Int { title.utf8.count + author.utf8.count + review.utf8.count }
}
