import JSON
import LyceumSupport

extension Book {
    /// Appends the contract's representation of the book (protocol/README.md, "Service `books`"):
    /// the one the `books` service's results and book events both carry. Written directly because
    /// books are the bulk of `get` and `list` replies.
    public func writeJSON(to output: inout [UInt8]) {
        withFields { $0.writeJSON(to: &output) }
    }

    /// Calls `body` with the book's fields, its texts as their contiguous UTF-8.
    func withFields<R>(_ body: (BookFields) -> R) -> R {
        var (id, title, author, review) = (id, title, author, review)
        return id.withUTF8 { id in
            title.withUTF8 { title in
                author.withUTF8 { author in
                    review.withUTF8 { review in
                        body(BookFields(
                            id: id, title: title, author: author, genre: genre, rating: rating, review: review, version: version,
                            createdAt: createdAt, updatedAt: updatedAt))
                    }
                }
            }
        }
    }
}

/// A book's fields with its texts as UTF-8, lent by a `Book` or straight from a `StoredBook`'s
/// bytes: one writer of each JSON form serves both, and a read writes its reply without making a
/// `String` per field first (issue 26).
struct BookFields {
    let id: UnsafeBufferPointer<UInt8>
    let title: UnsafeBufferPointer<UInt8>
    let author: UnsafeBufferPointer<UInt8>
    let genre: Genre
    let rating: Int
    let review: UnsafeBufferPointer<UInt8>
    let version: Int
    let createdAt: Int64
    let updatedAt: Int64

    /// Appends the contract's representation (`Book.writeJSON(to:)`); returns where in
    /// `output` its shared members (`writeSharedMembers`) are, for a journal payload to copy.
    @discardableResult
    func writeJSON(to output: inout [UInt8]) -> Range<Int> {
        output.append(utf8: #"{"id":"#)
        JSONString.append(utf8: id, to: &output)
        let sharedStart = output.count
        writeSharedMembers(to: &output)
        let shared = sharedStart..<output.count
        output.append(utf8: #","created_at":""#)
        RFC3339.withText(millisecondsSince1970: createdAt) { created in
            output.append(contentsOf: created)
            output.append(utf8: #"","updated_at":""#)
            // A book never updated (every create's reply) has one instant twice: formatted once.
            if updatedAt == createdAt {
                output.append(contentsOf: created)
            } else {
                RFC3339.write(millisecondsSince1970: updatedAt, to: &output)
            }
        }
        output.append(utf8: #""}"#)
        return shared
    }

    /// Appends `,"title":…` through `,"version":…`: the members that the contract's form and the
    /// journal payload share, in the order both write them.
    func writeSharedMembers(to output: inout [UInt8]) {
        output.append(utf8: #","title":"#)
        JSONString.append(utf8: title, to: &output)
        output.append(utf8: #","author":"#)
        JSONString.append(utf8: author, to: &output)
        output.append(utf8: #","genre":"#)
        JSONValue.write(genre.rawValue, to: &output)
        output.append(utf8: #","rating":"#)
        JSONValue.write(rating, to: &output)
        output.append(utf8: #","review":"#)
        JSONString.append(utf8: review, to: &output)
        output.append(utf8: #","version":"#)
        JSONValue.write(version, to: &output)
    }
}
