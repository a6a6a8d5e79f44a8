import JSON
import LyceumLogging
import Majordomo
import ZeroMQ

extension Workload {
    /// Prepares the server for a run of `mix`: discovers the catalog when the mix reads it or
    /// writes progress, and creates `bookCount` books spread over `learnerCount` learners
    /// when the mix reads or updates books. Everything goes through the wire protocol.
    /// - Throws: ``LoadTestError/Code/setupFailed`` naming the request that failed.
    public static func prepare(
        endpoint: String, mix: ScenarioMix, seed: UInt64, learnerCount: Int, bookCount: Int,
        timeout: Duration, security: SocketSecurity = .plaintext, context: Context
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
        return Workload(courses: courses, books: books, learners: learners, seed: seed)
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
