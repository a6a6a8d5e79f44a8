import JSON
import Journal

/// The compact JSON object a book is journaled as, and the fast path back.
extension Book {
    /// The newest value format of a stored book, the one `journalValue()` writes. Version 1 is
    /// also what books stored before values were versioned are.
    public static let valueFormat = 1

    /// This book as a journal payload, stamped with `valueFormat`.
    public func journalValue() -> [UInt8] {
        let value: JSONValue = [
            "value_format": .integer(Self.valueFormat),
            "id": .string(id), "learner": .string(learner), "title": .string(title), "author": .string(author),
            "genre": .string(genre.rawValue), "rating": .integer(rating), "review": .string(review),
            "version": .integer(version), "created_at": .integer(Int(createdAt)), "updated_at": .integer(Int(updatedAt)),
        ]
        return value.serialized()
    }

    /// Decodes a journal payload of any value format up to `valueFormat`, stamped or not.
    /// - Throws: `ValueDecodingError` saying which member is wrong, or that the value is of a
    ///   newer format.
    public init(journalValue bytes: [UInt8]) throws(ValueDecodingError) {
        // Replay decodes every book: read the members in the order `journalValue()` writes them,
        // and only parse generally when a payload was written some other way.
        let fast = JSONRecordReader.read(bytes) { (reader) -> Book? in
            guard !reader.member("value_format") || reader.integer() == Self.valueFormat,
                reader.member("id"), let id = reader.string(), reader.member("learner"), let learner = reader.string(),
                reader.member("title"), let title = reader.string(), reader.member("author"), let author = reader.string(),
                reader.member("genre"), let genreName = reader.string(), let genre = Genre(rawValue: genreName),
                reader.member("rating"), let rating = reader.integer(), reader.member("review"), let review = reader.string(),
                reader.member("version"), let version = reader.integer(), reader.member("created_at"), let created = reader.integer(),
                reader.member("updated_at"), let updated = reader.integer()
            else { return nil }
            return Book(
                id: id, learner: learner, title: title, author: author, genre: genre, rating: rating, review: review,
                version: version, createdAt: Int64(created), updatedAt: Int64(updated))
        }
        if let fast {
            self = fast
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
