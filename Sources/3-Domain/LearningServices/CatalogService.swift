import Access
import Catalog
import JSON
import LyceumLogging
import LyceumSupport

/// The `catalog` service: read-only queries over the catalog currently in `store`.
/// Operations: `list_courses`, `get_course`, `get_lesson`, `get_quiz`, `list_categories`,
/// `search`; see `protocol/README.md`.
public final class CatalogService: LearningService {
    /// The Majordomo service name.
    public static let serviceName = "catalog"
    /// `catalog`.
    public var name: String { Self.serviceName }

    private let renderings: CatalogRenderingCache
    private let budget: ReplyBudget

    /// A service answering from whatever catalog `store` holds at the time of each request,
    /// cutting `list_courses` and `search` pages at `budget`.
    public init(store: CatalogStore, budget: ReplyBudget = .standard) {
        renderings = CatalogRenderingCache(store: store)
        self.budget = budget
        // Rendered now, while the process starts, rather than by the first request.
        _ = renderings.rendering
    }

    /// Builds on the calling thread what answering from `catalog` needs (its courses' replies),
    /// so that the first request after `catalog` is served does not: for a reload, between
    /// loading the new catalog and swapping it in (`CatalogStore.reload(from:preparing:)`).
    public func prepare(_ catalog: Catalog) { renderings.prepare(catalog) }

    /// Answers one request frame on the calling thread: the catalog is read-only, so
    /// `completion` always runs before this returns. Any caller may read it (the broker has
    /// already checked that the caller may call services). See `LearningService`.
    public func handleWithCommit(_ frame: [UInt8], caller: Caller, completion: @escaping @Sendable (HandledRequest<Never>) -> Void) {
        completion(answer(frame))
    }

    /// The reply frame for one request frame, at once and without a hand-over between threads;
    /// any caller may read the catalog. See `LearningService`.
    public func handle(_ frame: [UInt8], caller: Caller = .unverified) -> [UInt8] { answer(frame).reply }

    private func answer(_ frame: [UInt8]) -> HandledRequest<Never> {
        // The request is at hand when answering an error, not copied beforehand for it (a
        // copy and its release were about 200 instructions a request, issue 26).
        var request: Request
        do throws(ServiceError) { request = try Request(frame) } catch { return HandledRequest(error, to: nil) }
        do throws(ServiceError) {
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
            return HandledRequest(reply: Reply.success(serialized: result), to: request)
        } catch {
            return HandledRequest(error, to: request)
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
        let written = budget.writeItems(page.courses, to: &output) { course, output in rendering.writeSummary(of: course, to: &output) }
        output.append(utf8: #"],"next_cursor":"#)
        JSONValue(page.prefix(written).nextCursor).write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    private func getCourse(_ request: inout Request, _ rendering: CatalogRendering) throws(ServiceError) -> [UInt8] {
        let id = try request.read { (reader) throws(JSONReadError) in try reader.id("course") }
        return Array(#"{"course":"#.utf8) + rendering.detail(of: try rendering.catalog.existingCourse(id)) + [UInt8(ascii: "}")]
    }

    private func getLesson(_ request: inout Request, _ catalog: Catalog) throws(ServiceError) -> JSONValue {
        let (courseID, lessonID) = try request.read { (reader) throws(JSONReadError) in (try reader.id("course"), try reader.id("lesson")) }
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
        let id = try request.read { (reader) throws(JSONReadError) in try reader.id("course") }
        let course = try catalog.existingCourse(id)
        guard let quiz = course.quiz else { throw ServiceError(.notFound, "course \(id) has no quiz", field: "$.course") }
        return ["quiz": quiz.learnerJSON(course: course.id)]
    }

    private func listCategories(_ request: inout Request, _ rendering: CatalogRendering) throws(ServiceError) -> [UInt8] {
        try request.read { (_: inout JSONObjectReader) throws(JSONReadError) in }
        return Array(#"{"categories":"#.utf8) + rendering.categories + [UInt8(ascii: "}")]
    }

    private func search(_ request: inout Request, _ rendering: CatalogRendering) throws(ServiceError) -> [UInt8] {
        let (query, limit, cursor) = try request.read { (reader) throws(JSONReadError) in
            (try reader.string("query", length: 1...200), try reader.limit(standard: 10, maximum: Catalog.maxSearchLimit),
             try reader.optionalString("cursor", length: 1...1024))
        }
        // The cursor is bound to the query by a hash, so that it stays short for any query.
        let scope = JSONValue.integer(Int(truncatingIfNeeded: Request.fnv1a(Array(query.utf8))))
        let offset: Int
        do throws(InvalidCursor) {
            offset = try cursor.map { (cursor) throws(InvalidCursor) in try Catalog.offset(cursor, scope: scope) } ?? 0
        } catch {
            throw ServiceError(.badRequest, "$.cursor is not a cursor of this search", field: "$.cursor")
        }
        // The offset comes from the client: past the last course it can only mean no more hits.
        let start = min(offset, rendering.catalog.courses.count)
        let ranked = rendering.catalog.search(query, limit: start + limit + 1)
        let hits = ranked.dropFirst(start).prefix(limit)
        var output: [UInt8] = Array(#"{"hits":["#.utf8)
        let written = budget.writeItems(hits, to: &output) { hit, output in
            output.append(utf8: #"{"course":"#)
            rendering.writeSummary(of: hit.course, to: &output)
            output.append(utf8: #","score":"#)
            JSONValue.write(hit.score, to: &output)
            output.append(utf8: #","lessons":"#)
            JSONValue.array(hit.lessons.map { ["id": .string($0.id), "title": .string($0.title)] }).write(to: &output)
            output.append(UInt8(ascii: "}"))
        }
        let more = written < hits.count || ranked.count > start + limit
        output.append(utf8: #"],"next_cursor":"#)
        JSONValue(more ? Catalog.cursor(offset: start + written, scope: scope) : nil).write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }
}
