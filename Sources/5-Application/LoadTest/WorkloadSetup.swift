import LyceumSupport
import JSON
import LyceumLogging
import Majordomo
import ZeroMQ

extension Workload {
    /// Prepares the server for a run of `mix`: discovers the catalog when the mix reads it or
    /// writes progress, creates `bookCount` books spread over `learnerCount` learners
    /// when the mix reads or updates books, and, when it lists a page past the first
    /// (`listing.page`), follows each learner's cursors to it. Everything goes through the wire
    /// protocol.
    /// - Throws: ``LoadTestError/Code/setupFailed`` naming the request that failed, or the
    ///   learner whose library ends before `listing.page`.
    public static func prepare(
        endpoint: String, mix: ScenarioMix, seed: UInt64, learnerCount: Int, bookCount: Int,
        listing: BookListing = BookListing(), timeout: Duration, security: SocketSecurity = .plaintext, context: Context
    ) throws(LoadTestError) -> Workload {
        var configuration = ClientConfiguration(timeout: timeout, attempts: 1)
        configuration.security = security
        let client = AsyncClient(endpoint: endpoint, capacity: 64, configuration: configuration, context: context)
        defer { client.close() }
        let logger = Logger(component: "bench")
        let learners = learners(count: learnerCount, seed: seed)
        var courses: [Course] = []
        if mix.includes(any: [.catalogRead, .progressWatch, .quizSubmit]) {
            courses = try discoverCourses(client)
            logger.info("catalog discovered", ["courses": "\(courses.count)", "endpoint": endpoint])
        }
        var books: [Book] = []
        if mix.includes(any: [.bookRead, .bookUpdate]) {
            var generator = SeededGenerator(seed: seed)
            var planned: [(Book, [[UInt8]])] = []
            for index in 0..<max(1, bookCount) {
                let learner = learners[index % learners.count]
                let book = syntheticBook(using: &generator)
                let body = RequestPlanner.frame(["op": "create", "learner": .string(learner), "title": .string(book.title),
                                                 "author": .string(book.author), "genre": .string(book.genre),
                                                 "rating": .integer(book.rating), "review": .string(book.review)])
                planned.append((Book(learner: learner, id: "", title: book.title, author: book.author, genre: book.genre), body))
            }
            logger.info("creating the books that reads and updates use", ["books": "\(planned.count)", "learners": "\(learners.count)"])
            let results = try call(client, "books", planned.map(\.1))
            for (index, result) in results.enumerated() {
                guard case .string(let id)? = result["book"]?["id"] else {
                    throw LoadTestError(code: .setupFailed, detail: "books.create replied without book.id")
                }
                let book = planned[index].0
                books.append(Book(learner: book.learner, id: id, title: book.title, author: book.author, genre: book.genre))
            }
        }
        var pageCursors: [String: String] = [:]
        if mix.includes(any: [.bookList]), let page = listing.page, page > 1 {
            logger.info("following cursors to the page that book-list lists", ["page": "\(page)", "learners": "\(learners.count)"])
            for learner in learners {
                pageCursors[learner] = try cursor(client, toPage: page, of: learner, listing)
            }
        }
        return Workload(courses: courses, books: books, learners: learners, seed: seed, pageCursors: pageCursors)
    }

    /// The cursor that `listing`'s page `page` of `learner`'s library starts after.
    private static func cursor(_ client: AsyncClient, toPage page: Int, of learner: String, _ listing: BookListing) throws(LoadTestError) -> String {
        var cursor: String?
        for listed in 1..<page {
            let result = try call(client, "books", [RequestPlanner.frame(listing.request(learner: learner, cursor: cursor))])[0]
            guard let next = BookListing.nextCursor(of: result) else {
                throw LoadTestError(code: .setupFailed, detail: "\(learner)'s library ends at page \(listed) (\(listing.limit) a page, by \(listing.sort)): there is no page \(page) to list")
            }
            cursor = next
        }
        // The first page has no cursor; prepare asks only for pages past it.
        guard let cursor else { throw LoadTestError(code: .invalidOption, option: "--list-page", detail: "page \(page) has no cursor") }
        return cursor
    }

    private static func discoverCourses(_ client: AsyncClient) throws(LoadTestError) -> [Course] {
        var summaries: [(id: String, questions: Int)] = []
        var cursor: JSONValue = .null
        repeat {
            var request: JSONValue = ["op": "list_courses", "limit": 100]
            if case .string = cursor { request = ["op": "list_courses", "limit": 100, "cursor": cursor] }
            let page = try call(client, "catalog", [RequestPlanner.frame(request)])[0]
            guard case .array(let listed)? = page["courses"] else {
                throw LoadTestError(code: .setupFailed, detail: "catalog.list_courses replied without courses")
            }
            for summary in listed {
                guard case .string(let id)? = summary["id"], case .integer(let questions)? = summary["question_count"] else {
                    throw LoadTestError(code: .setupFailed, detail: "catalog.list_courses: a course without id or question_count")
                }
                summaries.append((id, questions))
            }
            cursor = page["next_cursor"] ?? .null
        } while cursor != .null
        let details = try call(client, "catalog", summaries.map { RequestPlanner.frame(["op": "get_course", "course": .string($0.id)]) })
        return try zip(summaries, details).map { (summary, detail) throws(LoadTestError) in
            guard case .array(let lessons)? = detail["course"]?["lessons"] else {
                throw LoadTestError(code: .setupFailed, detail: "catalog.get_course \(summary.id) replied without lessons")
            }
            let ids = lessons.compactMap { lesson -> String? in
                if case .string(let id)? = lesson["id"] { return id }
                return nil
            }
            return Course(id: summary.id, lessonIDs: ids, questionCount: summary.questions)
        }
    }

    /// Sends `bodies` to `service`, up to the client's capacity at once, and returns the
    /// results in order; any failure ends setup.
    private static func call(_ client: AsyncClient, _ service: String, _ bodies: [[[UInt8]]]) throws(LoadTestError) -> [JSONValue] {
        var results = [JSONValue?](repeating: nil, count: bodies.count)
        var indexByID: [AsyncClient.RequestID: Int] = [:]
        var next = 0
        var done = 0
        do {
            while done < bodies.count {
                while next < bodies.count, client.inFlight < client.capacity {
                    indexByID[try client.send(service, body: bodies[next])] = next
                    next += 1
                }
                guard let completion = try client.receive() else { break }
                guard let index = indexByID.removeValue(forKey: completion.id) else { continue }
                let body = try completion.result.get()
                switch WireReply(body: body) {
                case .success(let result): results[index] = result
                case .failure(let code):
                    throw LoadTestError(code: .setupFailed, detail: "\(service) replied \(code) to \(String(decoding: bodies[index][0], as: UTF8.self))")
                case .malformed(let detail):
                    throw LoadTestError(code: .setupFailed, detail: "\(service) sent a malformed reply: \(detail)")
                }
                done += 1
            }
        } catch let error as LoadTestError {
            throw error
        } catch {
            throw LoadTestError(code: .setupFailed, detail: "\(service) at \(client.endpoint): \(error)")
        }
        return results.map { $0 ?? .null }
    }
}
