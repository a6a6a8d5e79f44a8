import JSON

/// One page of courses and the cursor of the next (`nil` on the last page).
public struct CoursePage: Sendable {
    /// The page's courses in catalog order.
    public let courses: [Course]
    /// The cursor of the next page, `nil` on the last.
    public let nextCursor: String?
    private let start: Int
    private let category: String?

    init(courses: [Course], start: Int, category: String?, hasMore: Bool) {
        self.courses = courses
        self.start = start
        self.category = category
        nextCursor = hasMore ? Catalog.cursor(offset: start + courses.count, scope: JSONValue(category)) : nil
    }

    /// The page cut to its first `count` courses (at least one), continuing after the last of
    /// them: how a reply that reached its byte budget still lets the client go on.
    public func prefix(_ count: Int) -> CoursePage {
        let kept = max(1, count)
        guard kept < courses.count else { return self }
        return CoursePage(courses: Array(courses.prefix(kept)), start: start, category: category, hasMore: true)
    }
}

/// A cursor that does not belong to the listing it was given to.
public struct InvalidCursor: Error, Sendable {}

extension Catalog {
    /// The most courses one page holds.
    public static let maxPageSize = 100

    /// Courses in catalog order, optionally of one category. The cursor is opaque to clients;
    /// it records the filter and position, so it is refused under a different filter. Costs
    /// O(page) whatever the catalog's size: a category's courses are listed when the catalog is
    /// built, and the cursor is the offset in that list.
    public func page(category: String?, limit: Int, cursor: String?) throws(InvalidCursor) -> CoursePage {
        let start = try cursor.map { (cursor) throws(InvalidCursor) in try Self.offset(cursor, scope: JSONValue(category)) } ?? 0
        let size = max(1, min(limit, Self.maxPageSize))
        guard let category else {
            let slice = courses.dropFirst(start).prefix(size)
            return CoursePage(courses: Array(slice), start: start, category: nil, hasMore: start + slice.count < courses.count)
        }
        let matching = categoryPositions[category] ?? []
        let slice = matching.dropFirst(start).prefix(size)
        return CoursePage(courses: slice.map { courses[$0] }, start: start, category: category, hasMore: start + slice.count < matching.count)
    }

    /// The cursor of the list position `offset` within `scope` (the filter or query it belongs to).
    public static func cursor(offset: Int, scope: JSONValue) -> String { PageCursor.encode([.integer(offset), scope]) }

    /// The offset a cursor of `scope` holds; throws for a cursor of another listing.
    public static func offset(_ cursor: String, scope: JSONValue) throws(InvalidCursor) -> Int {
        guard let parts = PageCursor.decode(cursor), parts.count == 2, case .integer(let offset) = parts[0], offset >= 0, parts[1] == scope
        else { throw InvalidCursor() }
        return offset
    }
}
