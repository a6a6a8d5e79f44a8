import Access
import Catalog
import JSON
import LyceumLifecycle
import LyceumLogging
import LyceumSupport

/// The `catalog` service: read-only queries over the catalog currently in `store`.
/// Operations: `list_courses`, `get_course`, `get_lesson`, `get_quiz`, `list_categories`,
/// `search`; see `protocol/README.md`.
///
/// Every operation but `search` costs O(reply) whatever the catalog's size, and is answered on
/// the calling thread. A search must score every course (tens to hundreds of milliseconds for
/// the largest catalog files, issue 40), so with a `searches` queue it is validated on the
/// calling thread and ranked on the queue's thread, and its completion comes from there.
public final class CatalogService: LearningService {
    /// The Majordomo service name.
    public static let serviceName = "catalog"
    /// `catalog`.
    public var name: String { Self.serviceName }
    /// The most searches that wait for the search thread, the one being ranked not counted:
    /// more are answered `unavailable` at once, so that a client flooding searches is told to
    /// slow down instead of making everyone's searches wait longer. For a catalog of a few
    /// thousand courses a search takes milliseconds and a full queue drains well within a
    /// client's timeout (2.5 s); with the largest files the loader takes (0.2–0.9 s a search,
    /// release) it holds several seconds of work.
    public static let maxQueuedSearches = 16

    private let renderings: CatalogRenderingCache
    private let budget: ReplyBudget
    private let searches: BoundedWorkQueue?

    /// A service answering from whatever catalog `store` holds at the time of each request,
    /// cutting `list_courses` and `search` pages at `budget`. With `searches`, searches are ranked
    /// on that queue's thread (``makeSearchQueue()``): on the calling thread before the queue
    /// runs, and answered `unavailable` once it was asked to stop; without, on the calling thread.
    public init(store: CatalogStore, budget: ReplyBudget = .standard, searches: BoundedWorkQueue? = nil) {
        renderings = CatalogRenderingCache(store: store)
        self.budget = budget
        self.searches = searches
        // Rendered now, while the process starts, rather than by the first request.
        _ = renderings.rendering
    }

    /// Builds on the calling thread what answering from `catalog` needs (its courses' replies),
    /// so that the first request after `catalog` is served does not: for a reload, between
    /// loading the new catalog and swapping it in (`CatalogStore.reload(from:preparing:)`).
    public func prepare(_ catalog: Catalog) { renderings.prepare(catalog) }

    /// The queue a process gives its catalog service for searches: ``maxQueuedSearches`` long,
    /// run by one thread.
    public static func makeSearchQueue() -> BoundedWorkQueue { BoundedWorkQueue(capacity: maxQueuedSearches) }

    /// Answers one request frame. Any caller may read the catalog (the broker has already
    /// checked that the caller may call services). Every reply but a queued search's completes
    /// on the calling thread before this returns; a search queued for the search thread
    /// completes there, and a search finding the queue full or stopping is answered
    /// `unavailable` at once (one still waiting when the queue stops, from its thread). See
    /// `LearningService`.
    public func handleWithCommit(_ frame: [UInt8], caller: Caller, completion: @escaping @Sendable (HandledRequest<Never>) -> Void) {
        switch answer(frame) {
        case .answered(let handled): completion(handled)
        case .search(let search):
            guard let searches else { return completion(search.rank()) }
            switch searches.submit({ stopping in completion(stopping ? search.refused(Self.stoppingMessage) : search.rank()) }) {
            case .queued: return
            case .notStarted: completion(search.rank())
            case .full: completion(search.refused("the catalog's search queue is full (\(searches.capacity) searches wait for its thread); retry after a pause"))
            case .stopped: completion(search.refused(Self.stoppingMessage))
            }
        }
    }

    /// The reply frame for one request frame, computed on the calling thread, searches included:
    /// for callers that spend a thread per request. See `LearningService`.
    public func handle(_ frame: [UInt8], caller: Caller = .unverified) -> [UInt8] {
        switch answer(frame) {
        case .answered(let handled): handled.reply
        case .search(let search): search.rank().reply
        }
    }

    /// Why a search is not ranked once the process is stopping.
    private static let stoppingMessage = "the server is stopping; retry the search"

    /// A request answered, or a valid search still to rank.
    private enum Answer {
        case answered(HandledRequest<Never>)
        case search(PendingSearch)
    }

    private func answer(_ frame: [UInt8]) -> Answer {
        // The request is at hand when answering an error, not copied beforehand for it (a
        // copy and its release were about 200 instructions a request, issue 26).
        var request: Request
        do throws(ServiceError) { request = try Request(frame) } catch { return .answered(HandledRequest(error, to: nil)) }
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
            case "search": return .search(try search(&request, rendering))
            default:
                throw ServiceError(
                    .unknownOp, "catalog has no operation \(PeerText.excerpt(request.op)); it has list_courses, get_course, get_lesson, get_quiz, list_categories, search",
                    field: "$.op")
            }
            return .answered(HandledRequest(reply: Reply.success(serialized: result), to: request))
        } catch {
            return .answered(HandledRequest(error, to: request))
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

    /// The search `request` asks for, validated: its query, page and cursor are read here, on
    /// the calling thread, so that a bad search is refused at once and only valid ones wait.
    private func search(_ request: inout Request, _ rendering: CatalogRendering) throws(ServiceError) -> PendingSearch {
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
        return PendingSearch(
            query: query, limit: limit, start: min(offset, rendering.catalog.courses.count), scope: scope, rendering: rendering,
            budget: budget, version: request.version)
    }
}

/// A valid search and the catalog it was asked of: what the search thread ranks and answers.
private struct PendingSearch: Sendable {
    let query: String
    let limit: Int
    let start: Int
    let scope: JSONValue
    let rendering: CatalogRendering
    let budget: ReplyBudget
    /// The contract version the request states, for an error reply.
    let version: Int?

    /// Ranks every course of the catalog and answers the page asked for.
    func rank() -> HandledRequest<Never> {
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
        return HandledRequest(reply: Reply.success(serialized: output), op: "search")
    }

    /// The search not ranked, for the reason `message` gives: `unavailable`, nothing done.
    func refused(_ message: String) -> HandledRequest<Never> {
        let error = ServiceError(.unavailable, message)
        return HandledRequest(reply: Reply.failure(error.forContractVersion(version)), op: "search", errorCode: error.code)
    }
}
