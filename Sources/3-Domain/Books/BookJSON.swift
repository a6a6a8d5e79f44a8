import JSON
import LyceumSupport

extension Book {
    /// Appends the contract's representation of the book (protocol/README.md, "Service `books`"):
    /// the one the `books` service's results and book events both carry. Written directly because
    /// books are the bulk of `get` and `list` replies.
    public func writeJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONValue.write(id, to: &output)
        writeSharedMembers(to: &output)
        output.append(contentsOf: #","created_at":""#.utf8)
        RFC3339.write(millisecondsSince1970: createdAt, to: &output)
        output.append(contentsOf: #"","updated_at":""#.utf8)
        RFC3339.write(millisecondsSince1970: updatedAt, to: &output)
        output.append(contentsOf: #""}"#.utf8)
    }
}

extension Book {
    /// Appends `,"title":…` through `,"version":…`: the members that the contract's form and the
    /// journal payload share, in the order both write them.
    func writeSharedMembers(to output: inout [UInt8]) {
        output.append(contentsOf: #","title":"#.utf8)
        JSONValue.write(title, to: &output)
        output.append(contentsOf: #","author":"#.utf8)
        JSONValue.write(author, to: &output)
        output.append(contentsOf: #","genre":"#.utf8)
        JSONValue.write(genre.rawValue, to: &output)
        output.append(contentsOf: #","rating":"#.utf8)
        JSONValue.write(rating, to: &output)
        output.append(contentsOf: #","review":"#.utf8)
        JSONValue.write(review, to: &output)
        output.append(contentsOf: #","version":"#.utf8)
        JSONValue.write(version, to: &output)
    }
}
