import Books
import JSON
import LyceumSupport

extension Book {
    /// The book as the `books` service's results carry it (protocol/README.md, "Service `books`").
    var eventJSON: JSONValue {
        [
            "id": .string(id), "title": .string(title), "author": .string(author), "genre": .string(genre.rawValue),
            "rating": .integer(rating), "review": .string(review), "version": .integer(version),
            "created_at": .string(RFC3339.string(millisecondsSince1970: createdAt)), "updated_at": .string(RFC3339.string(millisecondsSince1970: updatedAt)),
        ]
    }
}

/// The sequence numbers a book event is published with (protocol/events.md, "Sequence numbers").
struct BookSequences {
    /// Among all of the source's events.
    var sequence: UInt64
    /// Among the source's book events.
    var booksSequence: UInt64
}

/// The body of a book event (schema `events.book.json`).
enum BookEventBody {
    /// `event` as published with these numbers by `source`; `time` is when the change was made,
    /// in milliseconds since 1970.
    static func encode(_ event: BookEvent, revision: UInt64, sequences: BookSequences, source: EventSource, time: Int64) -> [UInt8] {
        let value: JSONValue = [
            "seq": .integer(Int(clamping: sequences.sequence)), "books_seq": .integer(Int(clamping: sequences.booksSequence)),
            "source": .string(source.description), "revision": .integer(Int(clamping: revision)), "type": .string(event.kind.rawValue),
            "learner": .string(event.learner), "book_id": .string(event.bookID), "book": event.book?.eventJSON ?? .null,
            "time": .string(RFC3339.string(millisecondsSince1970: time)),
        ]
        return value.serialized()
    }
}
