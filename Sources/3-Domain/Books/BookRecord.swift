import JSON
import Journal
import LyceumSupport

/// The compact JSON object a book is journaled as, and the fast path back.
extension Book {
    /// The newest value format of a stored book, the one `journalValue()` writes. Version 1 is
    /// also what books stored before values were versioned are.
    public static let valueFormat = 1

    /// This book as a journal payload, stamped with `valueFormat`. Written member by member,
    /// with no `JSONValue` tree: every create, update and compacted book makes one.
    public func journalValue() -> [UInt8] {
        withFields { journalValue($0, sharedMembers: nil) }
    }

    /// `journalValue()`, while appending `writeJSON(to:)`'s bytes to `json`: the members both
    /// forms share are written once and copied, since every create and update writes both
    /// (writing them again cost about 2k instructions a write, issue 26).
    func journalValue(appendingJSONTo json: inout [UInt8]) -> [UInt8] {
        withFields { fields in
            json.reserveCapacity(json.count + 192 + fields.title.count + fields.author.count + fields.review.count)
            let shared = fields.writeJSON(to: &json)
            return journalValue(fields, sharedMembers: json[shared])
        }
    }

    /// The payload of the book whose fields are `fields`; `sharedMembers`, when given, are
    /// `writeSharedMembers`' bytes for it, copied instead of written.
    private func journalValue(_ fields: BookFields, sharedMembers: ArraySlice<UInt8>?) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(192 + fields.title.count + fields.author.count + fields.review.count)
        output.append(utf8: #"{"value_format":"#)
        JSONValue.write(Self.valueFormat, to: &output)
        output.append(utf8: #","id":"#)
        JSONString.append(utf8: fields.id, to: &output)
        output.append(utf8: #","learner":"#)
        JSONValue.write(learner, to: &output)
        if let sharedMembers {
            output.append(contentsOf: sharedMembers)
        } else {
            fields.writeSharedMembers(to: &output)
        }
        output.append(utf8: #","created_at":"#)
        JSONValue.write(Int(createdAt), to: &output)
        output.append(utf8: #","updated_at":"#)
        JSONValue.write(Int(updatedAt), to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// Decodes a journal payload of any value format up to `valueFormat`, stamped or not.
    /// - Throws: `ValueDecodingError` saying which member is wrong, or that the value is of a
    ///   newer format.
    public init(journalValue bytes: [UInt8]) throws(ValueDecodingError) {
        // Payloads in `journalValue()`'s member order take the fast path replay takes.
        if let (learner, _, stored) = StoredBook.decoded(journalValue: bytes) {
            self = stored.book(learner: learner)
            return
        }
        // Version 1 is the only format so far; a later one migrates older values here.
        let (format, object) = try ValueFormat.object(bytes, newest: Self.valueFormat)
        var id: String?, learner: String?, title: String?, author: String?, review: String?
        var genre: Genre?, rating: Int?, version: Int?, created: Int?, updated: Int?
        // One pass over the members: replay decodes every book, so no per-key lookups.
        for member in object {
            switch (member.key, member.value) {
            case ("value_format", .integer(format)): continue
            case ("id", .string(let text)): id = text
            case ("learner", .string(let text)): learner = text
            case ("title", .string(let text)): title = text
            case ("author", .string(let text)): author = text
            case ("review", .string(let text)): review = text
            case ("genre", .string(let text)):
                guard let known = Genre(rawValue: text) else {
                    throw .malformed("the genre \"\(text)\" is not one of \(Genre.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                genre = known
            case ("rating", .integer(let number)): rating = number
            case ("version", .integer(let number)): version = number
            case ("created_at", .integer(let number)): created = number
            case ("updated_at", .integer(let number)): updated = number
            default: throw .malformed("the member \"\(member.key)\" is unknown or of the wrong type")
            }
        }
        typealias Member = ValueDecodingError
        self.init(
            id: try Member.required(id, "id"), learner: try Member.required(learner, "learner"),
            title: try Member.required(title, "title"), author: try Member.required(author, "author"),
            genre: try Member.required(genre, "genre"), rating: try Member.required(rating, "rating"),
            review: try Member.required(review, "review"), version: try Member.required(version, "version"),
            createdAt: Int64(try Member.required(created, "created_at")),
            updatedAt: Int64(try Member.required(updated, "updated_at")))
    }
}
