import JSON

/// The compact JSON object a book is journaled as, and the fast path back.
extension Book {
    /// This book as a journal payload.
    public func journalValue() -> [UInt8] {
        let value: JSONValue = [
            "id": .string(id), "learner": .string(learner), "title": .string(title), "author": .string(author),
            "genre": .string(genre.rawValue), "rating": .integer(rating), "review": .string(review),
            "version": .integer(version), "created_at": .integer(Int(createdAt)), "updated_at": .integer(Int(updatedAt)),
        ]
        return value.serialized()
    }

    /// Decodes a journal payload written by `journalValue()`; `nil` when it is not one.
    public init?(journalValue bytes: [UInt8]) {
        // Replay decodes every book: read the members in the order `journalValue()` writes them,
        // and only parse generally when a payload was written some other way.
        let fast = JSONRecordReader.read(bytes) { (reader) -> Book? in
            guard reader.member("id"), let id = reader.string(), reader.member("learner"), let learner = reader.string(),
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
        guard case .success(.object(let object)) = Result(catching: { () throws(JSONParseError) in try JSONParser().parse(bytes) })
        else { return nil }
        var id: String?, learner: String?, title: String?, author: String?, review: String?
        var genre: Genre?, rating: Int?, version: Int?, created: Int?, updated: Int?
        // One pass over the members: replay decodes every book, so no per-key lookups.
        for member in object {
            switch (member.key, member.value) {
            case ("id", .string(let text)): id = text
            case ("learner", .string(let text)): learner = text
            case ("title", .string(let text)): title = text
            case ("author", .string(let text)): author = text
            case ("review", .string(let text)): review = text
            case ("genre", .string(let text)): genre = Genre(rawValue: text)
            case ("rating", .integer(let number)): rating = number
            case ("version", .integer(let number)): version = number
            case ("created_at", .integer(let number)): created = number
            case ("updated_at", .integer(let number)): updated = number
            default: return nil
            }
        }
        guard let id, let learner, let title, let author, let review, let genre, let rating, let version,
            let created, let updated
        else { return nil }
        self.init(
            id: id, learner: learner, title: title, author: author, genre: genre, rating: rating, review: review,
            version: version, createdAt: Int64(created), updatedAt: Int64(updated))
    }
}
