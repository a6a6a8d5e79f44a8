import Catalog
import JSON

/// The `catalog` service: read-only queries over the catalog currently in `store`.
/// Operations: `list_courses`, `get_course`, `get_lesson`, `get_quiz`, `list_categories`,
/// `search`; see `protocol/README.md`.
public final class CatalogService: LearningService {
    /// The Majordomo service name.
    public static let serviceName = "catalog"
    public var name: String { Self.serviceName }

    private let store: CatalogStore

    /// A service answering from whatever catalog `store` holds at the time of each request.
    public init(store: CatalogStore) { self.store = store }

    public func handle(_ frame: [UInt8]) -> [UInt8] {
        do throws(ServiceError) {
            var request = try Request(frame)
            let catalog = store.catalog
            let result: JSONValue
            switch request.op {
            case "list_courses": result = try listCourses(&request, catalog)
            case "get_course": result = try getCourse(&request, catalog)
            case "get_lesson": result = try getLesson(&request, catalog)
            case "get_quiz": result = try getQuiz(&request, catalog)
            case "list_categories": result = try listCategories(&request, catalog)
            case "search": result = try search(&request, catalog)
            default:
                throw ServiceError(
                    .unknownOp, "catalog has no operation \(request.op); it has list_courses, get_course, get_lesson, get_quiz, list_categories, search",
                    field: "$.op")
            }
            return Reply.success(result)
        } catch {
            return Reply.failure(error)
        }
    }

    private func listCourses(_ request: inout Request, _ catalog: Catalog) throws(ServiceError) -> JSONValue {
        let (category, limit, cursor) = try request.read { (reader) throws(JSONReadError) in
            (try reader.optionalString("category", length: 1...200), try reader.limit(standard: 20, maximum: Catalog.maxPageSize),
             try reader.optionalString("cursor", length: 1...1024))
        }
        do throws(InvalidCursor) {
            let page = try catalog.page(category: category, limit: limit, cursor: cursor)
            return ["courses": .array(page.courses.map(\.summaryJSON)), "next_cursor": JSONValue(page.nextCursor)]
        } catch {
            throw ServiceError(.badRequest, "$.cursor is not a cursor of this listing", field: "$.cursor")
        }
    }

    private func getCourse(_ request: inout Request, _ catalog: Catalog) throws(ServiceError) -> JSONValue {
        let id = try request.read { (reader) throws(JSONReadError) in try reader.string("course") }
        return ["course": try catalog.existingCourse(id).detailJSON]
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

    private func listCategories(_ request: inout Request, _ catalog: Catalog) throws(ServiceError) -> JSONValue {
        try request.read { (_: inout JSONObjectReader) throws(JSONReadError) in }
        return ["categories": .array(catalog.categories.map { ["name": .string($0.name), "course_count": .integer($0.courseCount)] })]
    }

    private func search(_ request: inout Request, _ catalog: Catalog) throws(ServiceError) -> JSONValue {
        let (query, limit) = try request.read { (reader) throws(JSONReadError) in
            (try reader.string("query", length: 1...200), try reader.limit(standard: 10, maximum: 50))
        }
        let hits = catalog.search(query, limit: limit)
        return [
            "hits": .array(hits.map { hit in
                [
                    "course": hit.course.summaryJSON, "score": .integer(hit.score),
                    "lessons": .array(hit.lessons.map { ["id": .string($0.id), "title": .string($0.title)] }),
                ]
            })
        ]
    }
}
