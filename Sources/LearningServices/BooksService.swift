import Books
import JSON

/// The `books` service: each learner's library. Operations: `create`, `get`, `update`, `delete`,
/// `list`; see `protocol/README.md`.
public final class BooksService: LearningService {
    /// The Majordomo service name.
    public static let serviceName = "books"
    /// `books`.
    public var name: String { Self.serviceName }

    private let core: ServiceCore<BooksState>
    private let environment: ServiceEnvironment

    /// A service over `state` (replayed from the journal) that commits writes to `log`.
    public init(state: BooksState = BooksState(), log: any ChangeLog, environment: ServiceEnvironment = .live) {
        core = ServiceCore(state: state, log: log)
        self.environment = environment
    }

    /// Answers one request frame; see `LearningService`.
    public func handle(_ frame: [UInt8]) -> [UInt8] {
        do throws(ServiceError) {
            var request = try Request(frame)
            switch request.op {
            case "create": return try create(&request)
            case "get":
                try request.refuseRequestID()
                return try get(&request)
            case "update": return try update(&request)
            case "delete": return try delete(&request)
            case "list":
                try request.refuseRequestID()
                return try list(&request)
            default:
                throw ServiceError(.unknownOp, "books has no operation \(request.op); it has create, get, update, delete, list", field: "$.op")
            }
        } catch {
            return Reply.failure(error)
        }
    }

    private func create(_ request: inout Request) throws(ServiceError) -> [UInt8] {
        let (learner, draft) = try request.read { (reader) throws(JSONReadError) in
            let learner = try reader.learner()
            let title = try reader.string("title")
            let author = try reader.string("author")
            let genre = try reader.string("genre")
            let rating = try reader.integer("rating")
            let review = try reader.optionalString("review") ?? ""
            return (learner, (title, author, genre, rating, review))
        }
        let book = try domain { () throws(BookError) in
            try BookDraft(title: draft.0, author: draft.1, genre: try Book.genre(named: draft.2), rating: draft.3, review: draft.4)
        }
        return core.write(request, learner: learner) { (state) -> WritePlan<Never> in
            let (created, change) = state.library.creation(of: book, id: environment.makeID(), learner: learner, now: environment.now())
            return WritePlan(result: ["book": created.json], changes: [change])
        }.reply
    }

    private func get(_ request: inout Request) throws(ServiceError) -> [UInt8] {
        let (learner, id) = try request.read { (reader) throws(JSONReadError) in (try reader.learner(), try reader.string("id")) }
        return try core.read { (state) throws(ServiceError) in
            guard let book = state.library.book(id, of: learner) else {
                throw ServiceError(.notFound, "no book \(id) in the library of \(learner)", field: "$.id")
            }
            return Reply.success(["book": book.json])
        }
    }

    private func update(_ request: inout Request) throws(ServiceError) -> [UInt8] {
        let (learner, id, expected, fields) = try request.read { (reader) throws(JSONReadError) in
            let learner = try reader.learner()
            let id = try reader.string("id")
            let expected = try reader.optionalInteger("expected_version", in: 1...Int.max)
            let fields = (
                try reader.optionalString("title"), try reader.optionalString("author"), try reader.optionalString("genre"),
                try reader.optionalInteger("rating"), try reader.optionalString("review")
            )
            return (learner, id, expected, fields)
        }
        let patch = try domain { () throws(BookError) in
            try BookPatch(
                title: fields.0, author: fields.1, genre: try fields.2.map { (name) throws(BookError) in try Book.genre(named: name) },
                rating: fields.3, review: fields.4)
        }
        return core.write(request, learner: learner) { (state) throws(ServiceError) -> WritePlan<Never> in
            let (updated, change) = try domain { () throws(BookError) in
                try state.library.update(id, of: learner, with: patch, expectedVersion: expected, now: environment.now())
            }
            return WritePlan(result: ["book": updated.json], changes: [change])
        }.reply
    }

    private func delete(_ request: inout Request) throws(ServiceError) -> [UInt8] {
        let (learner, id, expected) = try request.read { (reader) throws(JSONReadError) in
            (try reader.learner(), try reader.string("id"), try reader.optionalInteger("expected_version", in: 1...Int.max))
        }
        return core.write(request, learner: learner) { (state) throws(ServiceError) -> WritePlan<Never> in
            let change = try domain { () throws(BookError) in
                try state.library.deletion(of: id, of: learner, expectedVersion: expected)
            }
            return WritePlan(result: ["deleted": .string(id)], changes: [change])
        }.reply
    }

    private func list(_ request: inout Request) throws(ServiceError) -> [UInt8] {
        let (learner, query) = try request.read { (reader) throws(JSONReadError) in
            let learner = try reader.learner()
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
            query.author = try reader.optionalString("author", length: 1...Book.maxAuthorLength)
            query.minRating = try reader.optionalInteger("min_rating", in: Book.ratings)
            query.limit = try reader.limit(standard: 20, maximum: BookQuery.maxLimit)
            query.cursor = try reader.optionalString("cursor", length: 1...1024)
            return (learner, query)
        }
        return try core.read { (state) throws(ServiceError) in
            let page = try domain { () throws(BookError) in try state.library.page(of: learner, query) }
            return Reply.success(["books": .array(page.books.map(\.json)), "next_cursor": JSONValue(page.nextCursor)])
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
        }
    }
}

extension Book {
    /// The contract's representation of a book.
    var json: JSONValue {
        [
            "id": .string(id), "title": .string(title), "author": .string(author), "genre": .string(genre.rawValue),
            "rating": .integer(rating), "review": .string(review), "version": .integer(version),
            "created_at": .string(Timestamp.rfc3339(createdAt)), "updated_at": .string(Timestamp.rfc3339(updatedAt)),
        ]
    }
}
