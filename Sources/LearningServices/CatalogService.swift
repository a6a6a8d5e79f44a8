import Catalog
import JSON
import Logging

/// The `catalog` service: read-only queries over the catalog currently in `store`.
/// Operations: `list_courses`, `get_course`, `get_lesson`, `get_quiz`, `list_categories`,
/// `search`; see `protocol/README.md`.
public final class CatalogService: LearningService {
    /// The Majordomo service name.
    public static let serviceName = "catalog"
    /// `catalog`.
    public var name: String { Self.serviceName }

    private let renderings: CatalogRenderingCache

    /// A service answering from whatever catalog `store` holds at the time of each request.
    public init(store: CatalogStore) { renderings = CatalogRenderingCache(store: store) }

    /// Answers one request frame on the calling thread: the catalog is read-only, so `reply`
    /// always runs before this returns. See `LearningService`.
    public func handle(_ frame: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) { reply(handle(frame)) }

    /// The reply frame for one request frame, at once and without a hand-over between threads;
    /// see `LearningService`.
    public func handle(_ frame: [UInt8]) -> [UInt8] {
        do throws(ServiceError) {
            var request = try Request(frame)
            try request.refuseRequestID()
            let rendering = renderings.rendering
            let catalog = rendering.catalog
            let result: [UInt8]
            switch request.op {
            case "list_courses": result = try listCourses(&request, rendering)
            case "get_course": result = try getCourse(&request, rendering)
            case "get_lesson": result = try getLesson(&request, catalog).serialized()
            case "get_quiz": result = try getQuiz(&request, catalog).serialized()
            case "list_categories": result = try listCategories(&request, rendering)
            case "search": result = try search(&request, rendering)
            default:
                throw ServiceError(
                    .unknownOp, "catalog has no operation \(PeerText.excerpt(request.op)); it has list_courses, get_course, get_lesson, get_quiz, list_categories, search",
                    field: "$.op")
            }
            return Reply.success(serialized: result)
        } catch {
            return Reply.failure(error)
        }
    }

    private func listCourses(_ request: inout Request, _ rendering: CatalogRendering) throws(ServiceError) -> [UInt8] {
        let (category, limit, cursor) = try request.read { (reader) throws(JSONReadError) in
            (try reader.optionalString("category", length: 1...200), try reader.limit(standard: 20, maximum: Catalog.maxPageSize),
             try reader.optionalString("cursor", length: 1...1024))
        }
        let page: CoursePage
        do throws(InvalidCursor) {
            page = try rendering.catalog.page(category: category, limit: limit, cursor: cursor)
        } catch {
            throw ServiceError(.badRequest, "$.cursor is not a cursor of this listing", field: "$.cursor")
        }
        var output: [UInt8] = Array(#"{"courses":["#.utf8)
        for (index, course) in page.courses.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            rendering.writeSummary(of: course, to: &output)
        }
        output.append(contentsOf: #"],"next_cursor":"#.utf8)
        JSONValue(page.nextCursor).write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    private func getCourse(_ request: inout Request, _ rendering: CatalogRendering) throws(ServiceError) -> [UInt8] {
        let id = try request.read { (reader) throws(JSONReadError) in try reader.string("course") }
        return Array(#"{"course":"#.utf8) + rendering.detail(of: try rendering.catalog.existingCourse(id)) + [UInt8(ascii: "}")]
    }

    private func getLesson(_ request: inout Request, _ catalog: Catalog) throws(ServiceError) -> JSONValue {
        let (courseID, lessonID) = try request.read { (reader) throws(JSONReadError) in (try reader.string("course"), try reader.string("lesson")) }
        let course = try catalog.existingCourse(courseID)
        let index = try course.existingLessonIndex(lessonID)
        let lesson = course.lessons[index]
        guard case .object(var object) = lesson.summaryJSON else { return lesson.summaryJSON }
        object.append("explanation", JSONValue(lesson.explanation))
        object.append("course", .string(course.id))
        object.append("position", .integer(index + 1))
        object.append("previous", JSONValue(index > 0 ? course.lessons[index - 1].id : nil))
        object.append("next", JSONValue(index + 1 < course.lessons.count ? course.lessons[index + 1].id : nil))
        return ["lesson": .object(object)]
    }

    private func getQuiz(_ request: inout Request, _ catalog: Catalog) throws(ServiceError) -> JSONValue {
        let id = try request.read { (reader) throws(JSONReadError) in try reader.string("course") }
        let course = try catalog.existingCourse(id)
        guard let quiz = course.quiz else { throw ServiceError(.notFound, "course \(id) has no quiz", field: "$.course") }
        return ["quiz": quiz.learnerJSON(course: course.id)]
    }

    private func listCategories(_ request: inout Request, _ rendering: CatalogRendering) throws(ServiceError) -> [UInt8] {
        try request.read { (_: inout JSONObjectReader) throws(JSONReadError) in }
        return Array(#"{"categories":"#.utf8) + rendering.categories + [UInt8(ascii: "}")]
    }

    private func search(_ request: inout Request, _ rendering: CatalogRendering) throws(ServiceError) -> [UInt8] {
        let (query, limit) = try request.read { (reader) throws(JSONReadError) in
            (try reader.string("query", length: 1...200), try reader.limit(standard: 10, maximum: 50))
        }
        var output: [UInt8] = Array(#"{"hits":["#.utf8)
        for (index, hit) in rendering.catalog.search(query, limit: limit).enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: #"{"course":"#.utf8)
            rendering.writeSummary(of: hit.course, to: &output)
            output.append(contentsOf: #","score":"#.utf8)
            JSONValue.write(hit.score, to: &output)
            output.append(contentsOf: #","lessons":"#.utf8)
            JSONValue.array(hit.lessons.map { ["id": .string($0.id), "title": .string($0.title)] }).write(to: &output)
            output.append(UInt8(ascii: "}"))
        }
        output.append(contentsOf: "]}".utf8)
        return output
    }
}
