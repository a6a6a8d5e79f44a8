import Access
import Books
import JSON
import Journal
import LyceumLogging
import LyceumSupport
import Partitions

/// The `books` service: each learner's library. Operations: `create`, `get`, `update`, `delete`,
/// `list`; see `protocol/README.md`.
public final class BooksService: JournaledService {
    /// The Majordomo service name.
    public static let serviceName = "books"
    /// `books`.
    public var name: String { Self.serviceName }

    private let core: ServiceCore<BooksState>
    private let environment: ServiceEnvironment
    private let budget: ReplyBudget
    private let partition: OwnedPartition?
    private let limits: LibraryLimits

    /// A service over `state` (replayed from the journal) that commits writes to `log`, cuts
    /// `list` pages at `budget` and refuses writes past `limits` with `limit_exceeded`; with
    /// `partition`, it serves only that partition's learners and refuses any other with
    /// `bad_request` (`$.learner`) before reading or writing anything.
    public init(
        state: BooksState = BooksState(), log: any ChangeLog, environment: ServiceEnvironment = .live, budget: ReplyBudget = .standard,
        partition: OwnedPartition? = nil, limits: LibraryLimits = .standard
    ) {
        core = ServiceCore(state: state, log: log, now: environment.ledgerClock)
        self.environment = environment
        self.budget = budget
        self.partition = partition
        self.limits = limits
    }

    /// A copy of the state including every applied write, e.g. for a journal compaction's
    /// `snapshot()`. O(1) now; the next write copies the top-level tables once. Do not call it
    /// from inside `ChangeLog.append`, which runs under the service's lock.
    public var currentState: BooksState { core.currentState }

    /// The state together with the log's last sequence number (`lastSequence()`, read under the
    /// service's write lock), both reflecting exactly the same writes: a journal compaction's
    /// capture. Throws when a journaled write could not be applied, which the state would miss.
    /// Do not call it from inside `ChangeLog.append`.
    public func captureState(lastSequence: () -> UInt64) throws(UndecodableValue) -> (state: BooksState, sequence: UInt64) {
        try core.capture(sequence: lastSequence)
    }

    /// Calls `completion` exactly once with the reply frame and, for a create, update or delete
    /// that changed a library, the `BookEvent` to publish with the ticket of the journal record
    /// that stored it. A write completes only once it is durable (possibly later, on the change
    /// log's thread), so an event is never handed out for a write that failed or could still be
    /// lost. Retries of an idempotent write, reads and refused requests carry no event, and
    /// complete on the calling thread unless they wait for an earlier record's durability.
    /// Ticket sequences follow the order writes were applied in, so they order the events of one
    /// library even when threads publish them in another order. Every operation needs a caller
    /// that may act for the request's learner; any other gets `forbidden` before the library
    /// (or the request ledger) is read.
    public func handleWithCommit(_ frame: [UInt8], caller: Caller, completion: @escaping @Sendable (HandledRequest<BookEvent>) -> Void) {
        guard var request = Request.parsed(frame, answeringErrorsWith: completion) else { return }
        do throws(ServiceError) {
            switch request.op {
            case "create": try create(&request, caller, completion)
            case "get":
                try request.refuseRequestID()
                completion(HandledRequest(reply: try get(&request, caller), to: request))
            case "update": try update(&request, caller, completion)
            case "delete": try delete(&request, caller, completion)
            case "list":
                try request.refuseRequestID()
                completion(HandledRequest(reply: try list(&request, caller), to: request))
            default:
                throw ServiceError(.unknownOp, "books has no operation \(PeerText.excerpt(request.op)); it has create, get, update, delete, list", field: "$.op")
            }
        } catch {
            completion(HandledRequest(error, to: request))
        }
    }

    // The write operations throw only while reading the request, before `ServiceCore.write`,
    // which always calls `completion`; so each request completes exactly once.

    private func create(_ request: inout Request, _ caller: Caller, _ completion: @escaping @Sendable (HandledRequest<BookEvent>) -> Void) throws(ServiceError) {
        let (learner, draft) = try request.read { (reader) throws(JSONReadError) in
            let learner = try reader.learner(in: partition)
            let title = try reader.string("title")
            let author = try reader.string("author")
            let genre = try reader.string("genre")
            let rating = try reader.integer("rating")
            let review = try reader.optionalString("review") ?? ""
            return (learner, (title, author, genre, rating, review))
        }
        try caller.authorize(actingFor: learner)
        let book = try domain { () throws(BookError) in
            try BookDraft(title: draft.0, author: draft.1, genre: try Book.genre(named: draft.2), rating: draft.3, review: draft.4)
        }
        core.write(request, learner: learner, plan: { (state) throws(ServiceError) -> WritePlan<BooksState, BookEvent> in
            var json: [UInt8] = []
            let (created, change) = try domain { () throws(BookError) in
                try state.library.creation(
                    of: book, id: environment.makeID(), learner: learner, now: environment.now(), limits: limits, appendingJSONTo: &json)
            }
            return WritePlan(
                reply: Book.successReply(bookJSON: json), changes: [change],
                event: BookEvent(kind: .created, learner: learner, bookID: created.id, book: created),
                perform: { (state) throws(UndecodableValue) in try state.store(created, by: change) })
        }, completion: completion)
    }

    private func get(_ request: inout Request, _ caller: Caller) throws(ServiceError) -> [UInt8] {
        let (learner, id) = try request.read { (reader) throws(JSONReadError) in (try reader.learner(in: partition), try reader.id("id")) }
        try caller.authorize(actingFor: learner)
        return try core.read { (state) throws(ServiceError) in
            guard let book = state.library.packedBook(id, of: learner) else {
                throw ServiceError(.notFound, "no book \(PeerText.excerpt(id)) in the library of \(PeerText.excerpt(learner))", field: "$.id")
            }
            // From the packed book: no `String` per field.
            return Book.successReply(textBytes: book.textByteCount) { book.writeJSON(to: &$0) }
        }
    }

    private func update(_ request: inout Request, _ caller: Caller, _ completion: @escaping @Sendable (HandledRequest<BookEvent>) -> Void) throws(ServiceError) {
        let (learner, id, expected, fields) = try request.read { (reader) throws(JSONReadError) in
            let learner = try reader.learner(in: partition)
            let id = try reader.id("id")
            let expected = try reader.optionalInteger("expected_version", in: 1...Int.max)
            let fields = (
                try reader.optionalString("title"), try reader.optionalString("author"), try reader.optionalString("genre"),
                try reader.optionalInteger("rating"), try reader.optionalString("review")
            )
            return (learner, id, expected, fields)
        }
        try caller.authorize(actingFor: learner)
        let patch = try domain { () throws(BookError) in
            try BookPatch(
                title: fields.0, author: fields.1, genre: try fields.2.map { (name) throws(BookError) in try Book.genre(named: name) },
                rating: fields.3, review: fields.4)
        }
        core.write(request, learner: learner, plan: { (state) throws(ServiceError) -> WritePlan<BooksState, BookEvent> in
            var json: [UInt8] = []
            let (updated, change) = try domain { () throws(BookError) in
                try state.library.update(
                    id, of: learner, with: patch, expectedVersion: expected, now: environment.now(), limits: limits, appendingJSONTo: &json)
            }
            return WritePlan(
                reply: Book.successReply(bookJSON: json), changes: [change],
                event: BookEvent(kind: .updated, learner: learner, bookID: id, book: updated),
                perform: { (state) throws(UndecodableValue) in try state.store(updated, by: change) })
        }, completion: completion)
    }

    private func delete(_ request: inout Request, _ caller: Caller, _ completion: @escaping @Sendable (HandledRequest<BookEvent>) -> Void) throws(ServiceError) {
        let (learner, id, expected) = try request.read { (reader) throws(JSONReadError) in
            (try reader.learner(in: partition), try reader.id("id"), try reader.optionalInteger("expected_version", in: 1...Int.max))
        }
        try caller.authorize(actingFor: learner)
        core.write(request, learner: learner, plan: { (state) throws(ServiceError) -> WritePlan<BooksState, BookEvent> in
            let change = try domain { () throws(BookError) in
                try state.library.deletion(of: id, of: learner, expectedVersion: expected)
            }
            let result: JSONValue = ["deleted": .string(id)]
            return WritePlan(
                reply: Reply.success(result), changes: [change], event: BookEvent(kind: .deleted, learner: learner, bookID: id, book: nil))
        }, completion: completion)
    }

    private func list(_ request: inout Request, _ caller: Caller) throws(ServiceError) -> [UInt8] {
        let (learner, query) = try request.read { (reader) throws(JSONReadError) in
            let learner = try reader.learner(in: partition)
            var query = BookQuery()
            if let sort = try reader.optionalString("sort") {
                guard let key = BookSortKey(rawValue: sort) else {
                    throw JSONReadError(path: "$.sort", message: "must be one of title, author, rating, created")
                }
                query.sort = key
            }
            switch try reader.optionalString("order") {
            case nil, "asc": query.descending = false
            case "desc": query.descending = true
            default: throw JSONReadError(path: "$.order", message: "must be asc or desc")
            }
            if let genre = try reader.optionalString("genre") {
                guard let known = Genre(rawValue: genre) else {
                    throw JSONReadError(path: "$.genre", message: "must be one of \(Genre.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                query.genre = known
            }
            query.author = try reader.optionalString("author", length: 1...Book.authorLimit.characters.upperBound)
            query.minRating = try reader.optionalInteger("min_rating", in: Book.ratings)
            query.limit = try reader.limit(standard: 20, maximum: BookQuery.maxLimit)
            query.cursor = try reader.optionalString("cursor", length: 1...BookQuery.maxCursorLength)
            return (learner, query)
        }
        try caller.authorize(actingFor: learner)
        // A learner's orders are sorted at their first list after a replay (`BooksState`).
        return try core.read(preparing: { $0.prepareList(of: learner) }) { (state) throws(ServiceError) in
            let page = try domain { () throws(BookError) in try state.library.page(of: learner, query) }
            var output: [UInt8] = Array(#"{"books":["#.utf8)
            let written = budget.writeItems(page.books, to: &output) { book, output in book.writeJSON(to: &output) }
            output.append(utf8: #"],"next_cursor":"#)
            JSONValue(page.prefix(written).nextCursor).write(to: &output)
            output.append(UInt8(ascii: "}"))
            return Reply.success(serialized: output)
        }
    }
}

/// Runs a domain step, turning its refusal into the contract's error.
private func domain<T>(_ body: () throws(BookError) -> T) throws(ServiceError) -> T {
    do throws(BookError) {
        return try body()
    } catch {
        let field = error.field.map { "$." + $0 }
        let message = field.map { "\($0) \(error.message)" } ?? error.message
        switch error.code {
        case .invalidField: throw ServiceError(.badRequest, message, field: field)
        case .notFound: throw ServiceError(.notFound, error.message, field: field)
        case .versionConflict: throw ServiceError(.conflict, error.message, field: field)
        case .limitExceeded: throw ServiceError(.limitExceeded, error.message, field: field)
        }
    }
}

extension Book {
    /// The reply whose result is `{"book": json}`, for a book already written as `json` (a
    /// create's or an update's, written while journaling it).
    static func successReply(bookJSON json: [UInt8]) -> [UInt8] {
        successReply(textBytes: json.count) { $0.append(contentsOf: json) }
    }

    /// The reply whose result is `{"book": …}` around the book `writeBook` appends, whose texts
    /// take `textBytes`: written straight into the reply's buffer (no result array to copy),
    /// sized for it unless the texts need escaping. The rest of a reply takes up to 241 bytes
    /// (the longest genre, a ten-digit version; 224 made every read's reply grow once more).
    static func successReply(textBytes: Int, _ writeBook: (inout [UInt8]) -> Void) -> [UInt8] {
        Reply.success(reservingCapacity: 256 + textBytes) { output in
            output.append(utf8: #"{"book":"#)
            writeBook(&output)
            output.append(UInt8(ascii: "}"))
        }
    }
}
