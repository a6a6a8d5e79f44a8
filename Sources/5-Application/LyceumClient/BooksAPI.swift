import JSON

/// The `books` service: each learner's own library (protocol/README.md, "Service `books`").
///
/// Writes take an optional `requestID`: give one that your application stores with its own
/// intent to make a write idempotent across your process's restarts too; without it the client
/// makes one per call, which every retry of that call reuses.
public struct BooksAPI: Sendable {
    let caller: RequestSender

    /// Adds a book to `learner`'s library.
    /// - Returns: the new book, `version` 1.
    /// - Throws: ``LyceumError`` (`badRequest` naming the field for a blank title, a rating outside 1–5, …).
    public func create(
        learner: String, title: String, author: String, genre: Genre, rating: Int, review: String? = nil, requestID: String? = nil
    ) async throws(LyceumError) -> Book {
        try await caller.call("books", "create", [
            "learner": .string(learner), "title": .string(title), "author": .string(author),
            "genre": .string(genre.rawValue), "rating": .integer(rating), "review": review.parameter,
        ], write: .write(requestID), as: BookResult.self).book
    }

    /// One book. - Throws: ``LyceumError/Code/notFound`` when the learner has no book `id`.
    public func get(learner: String, id: String) async throws(LyceumError) -> Book {
        try await caller.call("books", "get", ["learner": .string(learner), "id": .string(id)], as: BookResult.self).book
    }

    /// Changes the given fields of a book (at least one).
    /// - Parameter expectedVersion: when given, the update is refused with ``LyceumError/Code/conflict``
    ///   unless the book is at this version.
    /// - Returns: the book, its `version` one more.
    public func update(
        learner: String, id: String, expectedVersion: Int? = nil, title: String? = nil, author: String? = nil,
        genre: Genre? = nil, rating: Int? = nil, review: String? = nil, requestID: String? = nil
    ) async throws(LyceumError) -> Book {
        try await caller.call("books", "update", [
            "learner": .string(learner), "id": .string(id), "expected_version": expectedVersion.parameter,
            "title": title.parameter, "author": author.parameter, "genre": genre?.rawValue.parameter,
            "rating": rating.parameter, "review": review.parameter,
        ], write: .write(requestID), as: BookResult.self).book
    }

    /// Removes a book. - Returns: the id of the deleted book.
    public func delete(learner: String, id: String, expectedVersion: Int? = nil, requestID: String? = nil) async throws(LyceumError) -> String {
        try await caller.call("books", "delete", [
            "learner": .string(learner), "id": .string(id), "expected_version": expectedVersion.parameter,
        ], write: .write(requestID), as: DeletedResult.self).deleted
    }

    /// One page of `learner`'s books; pass the page's `nextCursor` back as `cursor`, with the same
    /// filters and order, for the next one (pages may stop before `limit`, at the server's byte budget).
    public func list(
        learner: String, sort: BookSort? = nil, order: SortOrder? = nil, genre: Genre? = nil, author: String? = nil,
        minRating: Int? = nil, limit: Int? = nil, cursor: String? = nil
    ) async throws(LyceumError) -> BookPage {
        try await caller.call("books", "list", [
            "learner": .string(learner), "sort": sort?.rawValue.parameter, "order": order?.rawValue.parameter,
            "genre": genre?.rawValue.parameter, "author": author.parameter, "min_rating": minRating.parameter,
            "limit": limit.parameter, "cursor": cursor.parameter,
        ])
    }
}

extension String {
    /// The parameter of a string.
    var parameter: JSONValue? { .string(self) }
}
