/// How much one learner's library may hold (issue 40): the most books, and the most bytes of
/// their titles, authors and reviews. A create (or an update that grows a book) past either is
/// refused with `limitExceeded` and changes nothing; books already stored beyond a lowered
/// limit stay, and only writes that add to them are refused.
public struct LibraryLimits: Sendable, Equatable {
    /// The most books one learner keeps.
    public var books: Int
    /// The most UTF-8 bytes of title, author and review across one learner's books.
    public var contentBytes: Int

    /// The defaults (the settings `max-books-per-learner` and `max-library-bytes` default to them): 10,000 books, twice what a reader finishing a book a week for a century
    /// owns, and 64 MiB of text, room for all of them with a 6 KB review each. A library that
    /// large still lists at index cost; the limits bound what one key may make a server keep.
    public static let standard = LibraryLimits(books: 10_000, contentBytes: 64 * 1024 * 1024)

    /// Limits of `books` books and `contentBytes` bytes of text.
    public init(books: Int, contentBytes: Int) {
        self.books = books
        self.contentBytes = contentBytes
    }
}
