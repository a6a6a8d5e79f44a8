/// A durable change to a learner's library, as dashboards are told of it.
public struct BookEvent: Sendable, Equatable {
    /// The kinds of change; the raw value is the published event type.
    public enum Kind: String, Sendable {
        case created = "book_created"
        case updated = "book_updated"
        case deleted = "book_deleted"
    }

    /// What happened.
    public let kind: Kind
    /// Whose library changed.
    public let learner: String
    /// The book concerned.
    public let bookID: String
    /// The book after the change; `nil` for a deletion.
    public let book: Book?

    /// An event with exactly these fields.
    public init(kind: Kind, learner: String, bookID: String, book: Book?) {
        self.kind = kind
        self.learner = learner
        self.bookID = bookID
        self.book = book
    }
}
