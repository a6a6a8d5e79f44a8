import JSON

/// A course as dashboards name it: its catalog id and title, and its lessons' titles.
public struct CourseTitle: Sendable, Equatable {
    /// The course's id.
    public let id: String
    /// Its title in the catalog.
    public let title: String
    /// Its lessons' titles by lesson id; empty when they were not asked for.
    public let lessons: [String: String]

    /// A course `id` titled `title`, whose lessons are titled `lessons` (by lesson id).
    public init(id: String, title: String, lessons: [String: String] = [:]) {
        self.id = id
        self.title = title
        self.lessons = lessons
    }
}

/// Every course's title from the catalog service's `list_courses` (protocol/README.md), page
/// after page, for the dashboards of processes that have no catalog of their own (`broker`,
/// `lyceum watch`). The transport is the caller's: this only writes requests and reads replies.
public enum CatalogTitles {
    /// The most pages read, so that a catalog answering without end cannot keep the caller.
    public static let maxPages = 1_000

    /// The titles, in catalog order and without lessons (`list_courses` summaries have none),
    /// asking through `call`, which sends one request body to the `catalog` service and returns
    /// the reply body, for `pageSize` courses a page (the service's maximum by default; fewer
    /// when its reply byte budget cuts a page short).
    /// - Throws: what `call` throws, or ``EventsError/Code/malformed`` for a reply that is an
    ///   error or does not follow the contract.
    public static func fetch(pageSize: Int = 100, _ call: (_ request: [UInt8]) throws -> [UInt8]) throws -> [CourseTitle] {
        var titles: [CourseTitle] = []
        var cursor: String?
        for _ in 0..<maxPages {
            var request = JSONObjectWriter()
            request.member("op", "list_courses")
            request.member("limit", pageSize)
            if let cursor { request.member("cursor", cursor) }
            let reply = try call(request.finish())
            do throws(JSONReadError) {
                var envelope = try decodeObject(reply)
                guard try envelope.value("ok") == .bool(true) else {
                    throw JSONReadError(path: "$.ok", message: "the catalog refused list_courses: \(String(decoding: reply.prefix(300), as: UTF8.self))")
                }
                var result = try envelope.object("result")
                for (value, path) in try result.array("courses") {
                    var course = try JSONObjectReader(value, path: path)
                    titles.append(CourseTitle(id: try course.string("id"), title: try course.string("title")))
                }
                cursor = try result.optionalString("next_cursor")
            } catch {
                throw EventsError(.malformed, "catalog list_courses reply: \(error)")
            }
            if cursor == nil { return titles }
        }
        return titles
    }

    /// The lessons' titles of `course` by lesson id, from one `get_course` asked through `call`
    /// (as ``fetch(pageSize:_:)``'s).
    /// - Throws: what `call` throws, or ``EventsError/Code/malformed`` for a reply that is an
    ///   error (an unknown course) or does not follow the contract.
    public static func lessons(of course: String, _ call: (_ request: [UInt8]) throws -> [UInt8]) throws -> [String: String] {
        var request = JSONObjectWriter()
        request.member("op", "get_course")
        request.member("course", course)
        let reply = try call(request.finish())
        do throws(JSONReadError) {
            var envelope = try decodeObject(reply)
            guard try envelope.value("ok") == .bool(true) else {
                throw JSONReadError(path: "$.ok", message: "the catalog refused get_course: \(String(decoding: reply.prefix(300), as: UTF8.self))")
            }
            var result = try envelope.object("result")
            var described = try result.object("course")
            var titles: [String: String] = [:]
            for (value, path) in try described.array("lessons") {
                var lesson = try JSONObjectReader(value, path: path)
                titles[try lesson.string("id")] = try lesson.string("title")
            }
            return titles
        } catch {
            throw EventsError(.malformed, "catalog get_course reply: \(error)")
        }
    }
}
