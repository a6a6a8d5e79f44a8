import JSON

/// One page of courses and the cursor of the next (`nil` on the last page).
public struct CoursePage: Sendable {
    /// The page's courses in catalog order.
    public let courses: [Course]
    /// The cursor of the next page, `nil` on the last.
    public let nextCursor: String?
}

/// A cursor that does not belong to the listing it was given to.
public struct InvalidCursor: Error, Sendable {}

extension Catalog {
    /// The most courses one page holds.
    public static let maxPageSize = 100

    /// Courses in catalog order, optionally of one category. The cursor is opaque to clients;
    /// it records the filter and position, so it is refused under a different filter.
    public func page(category: String?, limit: Int, cursor: String?) throws(InvalidCursor) -> CoursePage {
        let start = try cursor.map { (cursor) throws(InvalidCursor) in try Self.offset(cursor, category: category) } ?? 0
        let matching = category.map { category in courses.filter { $0.category == category } } ?? courses
        let size = max(1, min(limit, Self.maxPageSize))
        let slice = matching.dropFirst(start).prefix(size)
        let end = start + slice.count
        return CoursePage(courses: Array(slice), nextCursor: end < matching.count ? Self.cursor(offset: end, category: category) : nil)
    }

    private static func cursor(offset: Int, category: String?) -> String {
        let value: JSONValue = [.integer(offset), JSONValue(category)]
        return value.serialized().map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }
            .joined()
    }

    private static func offset(_ cursor: String, category: String?) throws(InvalidCursor) -> Int {
        let hex = Array(cursor.utf8)
        guard hex.count.isMultiple(of: 2), hex.count <= 1024 else { throw InvalidCursor() }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else { throw InvalidCursor() }
            bytes.append(byte)
        }
        guard case .success(.array(let parts)) = Result(catching: { () throws(JSONParseError) in try JSONParser().parse(bytes) }),
            parts.count == 2, case .integer(let offset) = parts[0], offset >= 0, parts[1] == JSONValue(category)
        else { throw InvalidCursor() }
        return offset
    }
}
