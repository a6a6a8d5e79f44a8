import JSON
import LyceumSupport

extension Book {
    /// Appends the contract's representation of the book (protocol/README.md, "Service `books`"):
    /// the one the `books` service's results and book events both carry. Written directly because
    /// books are the bulk of `get` and `list` replies.
    public func writeJSON(to output: inout [UInt8]) {
        output.append(utf8: #"{"id":"#)
        JSONValue.write(id, to: &output)
        writeSharedMembers(to: &output)
        output.append(utf8: #","created_at":""#)
        RFC3339.write(millisecondsSince1970: createdAt, to: &output)
        output.append(utf8: #"","updated_at":""#)
        RFC3339.write(millisecondsSince1970: updatedAt, to: &output)
        output.append(utf8: #""}"#)
    }
}

extension Book {
    /// Appends `,"title":…` through `,"version":…`: the members that the contract's form and the
    /// journal payload share, in the order both write them.
    func writeSharedMembers(to output: inout [UInt8]) {
        output.append(utf8: #","title":"#)
        JSONValue.write(title, to: &output)
        output.append(utf8: #","author":"#)
        JSONValue.write(author, to: &output)
        output.append(utf8: #","genre":"#)
        JSONValue.write(genre.rawValue, to: &output)
        output.append(utf8: #","rating":"#)
        JSONValue.write(rating, to: &output)
        output.append(utf8: #","review":"#)
        JSONValue.write(review, to: &output)
        output.append(utf8: #","version":"#)
        JSONValue.write(version, to: &output)
    }
}
