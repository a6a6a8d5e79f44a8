import JSON

/// What the `book-list` scenario asks for: a learner's `books list` in one order, `limit` books
/// a page, either following `next_cursor` page after page (starting over after the last) or one
/// page again and again.
public struct BookListing: Sendable, Equatable, CustomStringConvertible {
    /// The orders `books list` offers (protocol/README.md).
    public static let sorts = ["title", "author", "rating", "created"]

    /// One of ``sorts``.
    public var sort: String
    /// Books a page, 1 to 100 as the contract allows.
    public var limit: Int
    /// The page listed every time (1 is the first, 21 the one 20 cursors in); nil: every page
    /// in turn, following `next_cursor`, the first again after the last.
    public var page: Int?

    /// A listing; the defaults are `lyceum bench`'s: by creation, 50 a page, every page in turn.
    public init(sort: String = "created", limit: Int = 50, page: Int? = nil) {
        self.sort = sort
        self.limit = limit
        self.page = page
    }

    /// Refuses what the contract would refuse, naming the option.
    /// - Throws: ``LoadTestError/Code/invalidOption``.
    public func validate() throws(LoadTestError) {
        guard Self.sorts.contains(sort) else {
            throw LoadTestError(code: .invalidOption, option: "--list-sort", detail: "must be one of \(Self.sorts.joined(separator: ", ")), not '\(sort)'")
        }
        guard (1...100).contains(limit) else { throw LoadTestError(code: .invalidOption, option: "--list-limit", detail: "must be from 1 to 100") }
        if let page, !(1...1_000_000).contains(page) {
            throw LoadTestError(code: .invalidOption, option: "--list-page", detail: "must be from 1 to 1000000")
        }
    }

    /// The `books list` request for `learner`'s page after `cursor` (the first page without one).
    public func request(learner: String, cursor: String?) -> JSONValue {
        let request: JSONValue = ["op": "list", "learner": .string(learner), "sort": .string(sort), "limit": .integer(limit)]
        guard let cursor, case .object(var members) = request else { return request }
        members.append("cursor", .string(cursor))
        return .object(members)
    }

    /// The cursor a `books list` result continues from: nil after the last page (`null`), or
    /// when the result has none.
    static func nextCursor(of result: JSONValue) -> String? {
        if case .string(let cursor)? = result["next_cursor"] { return cursor }
        return nil
    }

    /// `by title, 50 a page, page 21` or `by created, 50 a page, every page in turn`.
    public var description: String {
        "by \(sort), \(limit) a page, " + (page.map { "page \($0)" } ?? "every page in turn")
    }
}
