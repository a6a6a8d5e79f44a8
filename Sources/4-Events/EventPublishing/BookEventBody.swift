import Books
import EventSubscription
import JSON
import LyceumSupport

extension EventStream where Event == BookEvent {
    /// The books service's events, on `books/<learner>/<book id>`; snapshots do not serve them
    /// (protocol/events.md). A deletion leaves no book to take the time of the change from, so
    /// its time is read when it is published.
    public static var books: EventStream<BookEvent> {
        EventStream(
            name: "books", topic: { EventTopic.book(learner: $0.learner, bookID: $0.bookID) }, encode: BookEventBody.encode,
            snapshotEntry: nil, statements: nil, time: { $0.book?.updatedAt ?? RFC3339.currentMillisecondsSince1970() })
    }
}

/// The body of a book event (schema `events.book.json`).
enum BookEventBody {
    /// `event` as published with these numbers by `source`; the book as the `books` service's
    /// results carry it (``Books/Book/writeJSON(to:)``).
    static func encode(_ event: BookEvent, stamp: EventStamp, source: EventSource) -> [UInt8] {
        var writer = JSONObjectWriter(reservingCapacity: 512)
        writer.member("seq", Int(clamping: stamp.sequence))
        writer.member("books_seq", Int(clamping: stamp.streamSequence))
        writer.member("source", source.description)
        writer.member("revision", Int(clamping: stamp.revision))
        writer.member("type", event.kind.rawValue)
        writer.member("learner", event.learner)
        writer.member("book_id", event.bookID)
        if let book = event.book {
            var json: [UInt8] = []
            book.writeJSON(to: &json)
            writer.member("book", encoded: json)
        } else {
            writer.member("book", JSONValue.null)
        }
        writer.member("time", RFC3339.string(millisecondsSince1970: stamp.time))
        return writer.finish()
    }
}
