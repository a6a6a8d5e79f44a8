import Foundation
import JSON
import LyceumLifecycle
import LyceumSupport
import LyceumTestSupport
import Majordomo
import Synchronization
import ZeroMQ

/// A broker and minimal `books` and `catalog` services in this process, speaking the wire
/// protocol just well enough for load tests: books are kept in memory and listed in id order
/// whatever the learner and sort; one course is listed.
/// It can lie (reads return a wrong title) and stall (one request held for a while), which
/// is what the tests need from it.
final class FakeLyceum {
    enum Behaviour: Sendable {
        case honest
        /// `books.get` replies with a title that is not the book's.
        case lying
        /// The `books` request numbered `request` (1-based) waits `stall` before its reply.
        case stalling(request: Int, stall: Duration)
    }

    let context: Context
    let endpoint: String
    private let threads: [ComponentThread]
    private let books: FakeBooks

    /// `books list` requests answered without a cursor: first pages.
    var firstPagesListed: Int { books.firstPages.load(ordering: .relaxed) }

    init(behaviour: Behaviour = .honest, sessions: Int = 2) throws {
        context = try Context()
        let broker = try Broker(endpoints: ["tcp://127.0.0.1:*"], context: context)
        var threads = [ComponentThread(broker, name: "fake-broker")]
        endpoint = try broker.waitUntilBound()[0]
        let books = FakeBooks(behaviour: behaviour)
        self.books = books
        for index in 0..<sessions {
            let session = try WorkerSession(endpoint: endpoint, service: "books", context: context) { books.handle($0) }
            threads.append(ComponentThread(session, name: "fake-books-\(index)"))
        }
        let catalog = try WorkerSession(endpoint: endpoint, service: "catalog", context: context) { FakeBooks.catalog($0) }
        threads.append(ComponentThread(catalog, name: "fake-catalog"))
        self.threads = threads
        // Workers register asynchronously; a request sent before they do would wait for them.
        try waitUntilServing(["books", "catalog"], at: endpoint)
    }

    /// Stops the workers first, then the broker.
    func stop() {
        for thread in threads.reversed() { thread.stop() }
    }
}

/// The fake `books` service's state, shared by its sessions, and the fake catalog.
private final class FakeBooks: Sendable {
    private let books = Mutex<[String: JSONValue]>([:])
    private let requests = Atomic<Int>(0)
    let firstPages = Atomic<Int>(0)
    private let behaviour: FakeLyceum.Behaviour

    init(behaviour: FakeLyceum.Behaviour) { self.behaviour = behaviour }

    func handle(_ body: [[UInt8]]) -> [[UInt8]] {
        let number = requests.add(1, ordering: .relaxed).newValue
        if case .stalling(let request, let stall) = behaviour, number == request {
            Thread.sleep(forTimeInterval: stall.seconds)
        }
        let request: JSONValue
        do {
            request = try JSONParser().parse(body[0])
        } catch {
            return Self.failure("bad_request")
        }
        switch request["op"] {
        case "create":
            let id = "00000000-0000-4000-8000-" + String(String(number).reversed()).padding(toLength: 12, withPad: "0", startingAt: 0)
            let book: JSONValue = ["id": .string(id), "title": request["title"] ?? .null, "author": request["author"] ?? .null,
                                   "genre": request["genre"] ?? .null, "rating": request["rating"] ?? .null,
                                   "review": request["review"] ?? "", "version": 1]
            books.withLock { $0[id] = book }
            return Self.success(["book": book])
        case "get":
            guard case .string(let id)? = request["id"], let book = books.withLock({ $0[id] }) else { return Self.failure("not_found") }
            if case .lying = behaviour {
                return Self.success(["book": ["id": .string(id), "title": "Not the book you wrote", "author": book["author"] ?? .null,
                                              "genre": book["genre"] ?? .null, "version": 1]])
            }
            return Self.success(["book": book])
        case "list":
            // In id order; the cursor is the last id of the page before.
            guard case .integer(let limit)? = request["limit"] else { return Self.failure("bad_request") }
            let cursor: String?
            switch request["cursor"] {
            case .string(let text)?: cursor = text
            case nil: cursor = nil
            default: return Self.failure("bad_request")
            }
            if cursor == nil { firstPages.add(1, ordering: .relaxed) }
            let after = books.withLock { $0.sorted { $0.key < $1.key } }.filter { entry in cursor.map { entry.key > $0 } ?? true }
            let page = after.prefix(limit)
            let next: JSONValue = after.count > limit ? .string(page[page.endIndex - 1].key) : .null
            return Self.success(["books": .array(page.map(\.value)), "next_cursor": next])
        default:
            return Self.failure("unknown_op")
        }
    }

    static func catalog(_ body: [[UInt8]]) -> [[UInt8]] {
        let request: JSONValue
        do {
            request = try JSONParser().parse(body[0])
        } catch {
            return failure("bad_request")
        }
        switch request["op"] {
        case "list_courses":
            return success(["courses": [["id": "swift-basics", "title": "Swift Basics", "lesson_count": 2, "question_count": 0]],
                            "next_cursor": nil])
        case "get_course":
            return success(["course": ["id": "swift-basics", "title": "Swift Basics", "lesson_count": 2,
                                       "lessons": [["id": "1", "title": "Values"], ["id": "2", "title": "Types"]]]])
        default:
            return failure("unknown_op")
        }
    }

    private static func success(_ result: JSONValue) -> [[UInt8]] { [(["ok": true, "result": result] as JSONValue).serialized()] }
    private static func failure(_ code: String) -> [[UInt8]] {
        [(["ok": false, "error": ["code": .string(code), "message": "fake"]] as JSONValue).serialized()]
    }
}
