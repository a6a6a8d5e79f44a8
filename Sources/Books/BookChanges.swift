/// The fields of a new book, validated on construction.
public struct BookDraft: Sendable, Equatable {
    public let title: String
    public let author: String
    public let genre: Genre
    public let rating: Int
    public let review: String

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
    public let title: String?
    public let author: String?
    public let genre: Genre?
    public let rating: Int?
    public let review: String?

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
