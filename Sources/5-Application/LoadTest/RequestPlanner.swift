import LyceumSupport
import JSON

/// A request ready to send and what its reply must say.
struct PlannedRequest {
    /// What the reply must contain for `--verify` to accept it.
    enum Expectation {
        case course(id: String, lessonCount: Int)
        case book(Workload.Book)
        case created(learner: String, title: String, author: String, genre: String, rating: Int, review: String)
        case updated(id: String, rating: Int, review: String)
        case deleted(id: String)
        case progress(course: String, lessonCount: Int)
        case quiz(course: String, total: Int)
        /// A `books list` page of at most `limit` books.
        case page(limit: Int)
    }

    let scenario: Scenario
    let body: [[UInt8]]
    let expectation: Expectation
}

/// How one reply turned out.
enum ReplyOutcome: Equatable {
    case success
    /// A protocol error code (`not_found`) or a transport one (`timed_out`).
    case error(code: String)
    /// `--verify` found the reply wrong: the detail says how.
    case wrong(String)
}

/// Generates one connection's requests from the seed and judges their replies. Each
/// connection has its own planner, seeded from the run's seed and the connection's number,
/// so the sequence does not depend on how threads interleave.
struct RequestPlanner {
    let workload: Workload
    let mix: ScenarioMix
    let verify: Bool
    /// Set when requests may be resent through another broker: each write then carries the
    /// `request_id` `PREFIX-N`, so that a resend the first broker's worker already applied
    /// returns the first reply and changes nothing.
    let requestIDPrefix: String?
    /// What `book-list` asks for.
    let listing: BookListing
    private var writesPlanned = 0
    private var generator: SeededGenerator
    /// Books this connection created and may delete, by learner, oldest first.
    private var deletable: [(learner: String, id: String)] = []
    private let coursesWithLessons: [Workload.Course]
    private let coursesWithQuiz: [Workload.Course]
    /// The learner whose library `book-list` lists: the connection's number modulo the learners.
    private let listedLearner: String
    /// Following every page in turn: the `next_cursor` of the last page received, nil for the
    /// first page (at the start, after the last page, after an error).
    private(set) var listCursor: String?
    /// The lesson `progress-watch` marked last, which its next request unmarks.
    private var watchedLesson: (learner: String, course: Workload.Course, lesson: String)?

    init(workload: Workload, mix: ScenarioMix, verify: Bool, connection: Int, requestIDPrefix: String? = nil,
         listing: BookListing = BookListing()) {
        self.workload = workload
        self.mix = mix
        self.verify = verify
        self.requestIDPrefix = requestIDPrefix
        self.listing = listing
        listedLearner = workload.learners.isEmpty ? "" : workload.learners[connection % workload.learners.count]
        generator = SeededGenerator(seed: workload.seed &+ 0x5EED &* UInt64(connection + 1))
        coursesWithLessons = workload.courses.filter { !$0.lessonIDs.isEmpty }
        coursesWithQuiz = workload.courses.filter { $0.questionCount > 0 }
    }

    /// The scenarios a workload cannot serve, with the reason: the mix must avoid them.
    static func unservable(_ mix: ScenarioMix, by workload: Workload) -> [(Scenario, String)] {
        mix.entries.compactMap { entry in
            switch entry.scenario {
            case .catalogRead where workload.courses.isEmpty: (entry.scenario, "the catalog lists no course")
            case .progressWatch where !workload.courses.contains(where: { !$0.lessonIDs.isEmpty }):
                (entry.scenario, "no course has lessons")
            case .quizSubmit where !workload.courses.contains(where: { $0.questionCount > 0 }):
                (entry.scenario, "no course has a quiz")
            case .bookRead where workload.books.isEmpty, .bookUpdate where workload.books.isEmpty: (entry.scenario, "no book was created in setup")
            default: nil
            }
        }
    }

    mutating func next() -> PlannedRequest {
        let scenario = mix.pick(using: &generator)
        switch scenario {
        case .catalogRead:
            let course = workload.courses.randomElement(using: &generator)!
            return PlannedRequest(scenario: scenario, body: Self.frame(["op": "get_course", "course": .string(course.id)]),
                                  expectation: .course(id: course.id, lessonCount: course.lessonIDs.count))
        case .bookRead:
            let book = workload.books.randomElement(using: &generator)!
            return PlannedRequest(scenario: scenario, body: Self.frame(["op": "get", "learner": .string(book.learner), "id": .string(book.id)]),
                                  expectation: .book(book))
        case .bookUpdate:
            let book = workload.books.randomElement(using: &generator)!
            let rating = Int.random(in: 1...5, using: &generator)
            let review = "Re-read \(Int.random(in: 1...9999, using: &generator)) times."
            return PlannedRequest(scenario: scenario,
                                  body: writeFrame(["op": "update", "learner": .string(book.learner), "id": .string(book.id),
                                                    "rating": .integer(rating), "review": .string(review)]),
                                  expectation: .updated(id: book.id, rating: rating, review: review))
        case .bookDelete where !deletable.isEmpty:
            let book = deletable.removeFirst()
            return PlannedRequest(scenario: scenario, body: writeFrame(["op": "delete", "learner": .string(book.learner), "id": .string(book.id)]),
                                  expectation: .deleted(id: book.id))
        case .bookCreate, .bookDelete:
            let learner = workload.learners.randomElement(using: &generator)!
            let book = Workload.syntheticBook(using: &generator)
            return PlannedRequest(scenario: .bookCreate,
                                  body: writeFrame(["op": "create", "learner": .string(learner), "title": .string(book.title),
                                                    "author": .string(book.author), "genre": .string(book.genre),
                                                    "rating": .integer(book.rating), "review": .string(book.review)]),
                                  expectation: .created(learner: learner, title: book.title, author: book.author, genre: book.genre,
                                                        rating: book.rating, review: book.review))
        case .bookList:
            // One page again and again (its cursor found in setup; none for the first), or every
            // page in turn. With several requests in flight on a connection, those sent before a
            // page's reply arrives ask for the same page again.
            let cursor: String?
            switch listing.page {
            case nil: cursor = listCursor
            case 1?: cursor = nil
            case _?: cursor = workload.pageCursors[listedLearner]
            }
            return PlannedRequest(scenario: scenario, body: Self.frame(listing.request(learner: listedLearner, cursor: cursor)),
                                  expectation: .page(limit: listing.limit))
        case .progressWatch:
            // Marked, then unmarked: both change the learner's progress, so both are written.
            if let watched = watchedLesson {
                watchedLesson = nil
                return progressWrite("mark_unwatched", watched.learner, watched.course, watched.lesson)
            }
            let course = coursesWithLessons.randomElement(using: &generator)!
            let learner = workload.learners.randomElement(using: &generator)!
            let lesson = course.lessonIDs.randomElement(using: &generator)!
            watchedLesson = (learner, course, lesson)
            return progressWrite("mark_watched", learner, course, lesson)
        case .quizSubmit:
            let course = coursesWithQuiz.randomElement(using: &generator)!
            let learner = workload.learners.randomElement(using: &generator)!
            let answers = (0..<course.questionCount).map { _ in JSONValue.integer(Int.random(in: 0...1, using: &generator)) }
            return PlannedRequest(scenario: scenario,
                                  body: writeFrame(["op": "submit_quiz", "learner": .string(learner), "course": .string(course.id),
                                                    "answers": .array(answers)]),
                                  expectation: .quiz(course: course.id, total: course.questionCount))
        }
    }

    /// Judges a reply; remembers created books so that deletes have something to delete, and
    /// the next page's cursor when `book-list` follows them.
    mutating func judge(_ body: [[UInt8]], for request: PlannedRequest) -> ReplyOutcome {
        let following = request.scenario == .bookList && listing.page == nil
        let needsBody = verify || following || (request.scenario == .bookCreate && mix.includes(any: [.bookDelete]))
        if !needsBody && WireReply.isSuccess(body) { return .success }
        let result: JSONValue
        switch WireReply(body: body) {
        case .failure(let code):
            // A refused cursor would be refused again: start over at the first page.
            if following { listCursor = nil }
            return .error(code: code)
        case .malformed(let detail): return .wrong(detail)
        case .success(let value): result = value
        }
        if following { listCursor = BookListing.nextCursor(of: result) }
        let outcome = verify ? Self.check(result, against: request.expectation) : .success
        if outcome == .success, case .created(let learner, _, _, _, _, _) = request.expectation,
           case .string(let id)? = result["book"]?["id"] {
            deletable.append((learner, id))
        }
        return outcome
    }

    static func check(_ result: JSONValue, against expectation: PlannedRequest.Expectation) -> ReplyOutcome {
        func expect(_ path: String, _ actual: JSONValue?, _ wanted: JSONValue) -> ReplyOutcome? {
            actual == wanted ? nil : .wrong("\(path) is \(actual.map { String(decoding: $0.serialized(), as: UTF8.self) } ?? "missing"), expected \(String(decoding: wanted.serialized(), as: UTF8.self))")
        }
        let mismatch: ReplyOutcome?
        switch expectation {
        case .course(let id, let lessonCount):
            let course = result["course"]
            mismatch = expect("course.id", course?["id"], .string(id)) ?? expect("course.lesson_count", course?["lesson_count"], .integer(lessonCount))
        case .book(let book):
            let reply = result["book"]
            mismatch = expect("book.id", reply?["id"], .string(book.id)) ?? expect("book.title", reply?["title"], .string(book.title))
                ?? expect("book.author", reply?["author"], .string(book.author)) ?? expect("book.genre", reply?["genre"], .string(book.genre))
        case .created(_, let title, let author, let genre, let rating, let review):
            let reply = result["book"]
            mismatch = expect("book.title", reply?["title"], .string(title)) ?? expect("book.author", reply?["author"], .string(author))
                ?? expect("book.genre", reply?["genre"], .string(genre)) ?? expect("book.rating", reply?["rating"], .integer(rating))
                ?? expect("book.review", reply?["review"], .string(review)) ?? expect("book.version", reply?["version"], .integer(1))
        case .updated(let id, let rating, let review):
            let reply = result["book"]
            mismatch = expect("book.id", reply?["id"], .string(id)) ?? expect("book.rating", reply?["rating"], .integer(rating))
                ?? expect("book.review", reply?["review"], .string(review))
        case .deleted(let id):
            mismatch = expect("deleted", result["deleted"], .string(id))
        case .progress(let course, let lessonCount):
            let progress = result["progress"]
            mismatch = expect("progress.course", progress?["course"], .string(course))
                ?? expect("progress.lesson_count", progress?["lesson_count"], .integer(lessonCount))
        case .quiz(let course, let total):
            mismatch = expect("total", result["total"], .integer(total)) ?? expect("progress.course", result["progress"]?["course"], .string(course))
        case .page(let limit):
            mismatch = checkPage(result, limit: limit)
        }
        return mismatch ?? .success
    }

    /// A page holds at most `limit` books, each with an id, and `next_cursor` is a string or
    /// null; a page with a next one is not empty (paging makes progress).
    private static func checkPage(_ result: JSONValue, limit: Int) -> ReplyOutcome? {
        guard case .array(let books)? = result["books"] else { return .wrong("books is missing or not an array") }
        guard books.count <= limit else { return .wrong("\(books.count) books on a page of at most \(limit)") }
        for book in books {
            guard case .string? = book["id"] else { return .wrong("a listed book has no string id") }
        }
        switch result["next_cursor"] {
        case .string?: return books.isEmpty ? .wrong("an empty page has a next_cursor") : nil
        case .null?: return nil
        default: return .wrong("next_cursor is neither a string nor null")
        }
    }

    static func frame(_ request: JSONValue) -> [[UInt8]] { [request.serialized()] }

    /// A `progress-watch` request: `op` (`mark_watched` or `mark_unwatched`) of `lesson`.
    private mutating func progressWrite(_ op: String, _ learner: String, _ course: Workload.Course, _ lesson: String) -> PlannedRequest {
        PlannedRequest(scenario: .progressWatch,
                       body: writeFrame(["op": .string(op), "learner": .string(learner), "course": .string(course.id), "lesson": .string(lesson)]),
                       expectation: .progress(course: course.id, lessonCount: course.lessonIDs.count))
    }

    /// The body of a write: with ``requestIDPrefix``, carrying a `request_id` of its own.
    private mutating func writeFrame(_ request: JSONValue) -> [[UInt8]] {
        guard let requestIDPrefix, case .object(var members) = request else { return Self.frame(request) }
        writesPlanned += 1
        members.append("request_id", .string("\(requestIDPrefix)-\(writesPlanned)"))
        return Self.frame(.object(members))
    }
}
