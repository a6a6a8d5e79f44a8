import Foundation
import JSON
import ZeroMQ

/// A client of Lyceum's three services for Swift backends: an `async` method per operation with
/// typed results (``books``, ``catalog``, ``progress``), typed errors (``LyceumError``),
/// timeouts, retries with back-off, fail-over between brokers, and many requests in flight on
/// one connection.
///
/// Every write carries a `request_id` of its own, generated once, so that however often the
/// client retries it, the server applies it once. The sockets live on the client's own thread,
/// so no `await` blocks the caller's executor. Safe to share between tasks; ``close()`` (or the
/// last reference going away) ends the thread and fails whatever is still waiting.
public final class LyceumClient: Sendable {
    /// What it was created with.
    public let configuration: LyceumClientConfiguration
    let caller: RequestSender

    /// Starts the client's thread; the first request connects to the first broker.
    /// - Throws: ``LyceumError/Code/invalidConfiguration`` for an empty broker list, or when
    ///   the process cannot open the sockets' context.
    public init(configuration: LyceumClientConfiguration) throws(LyceumError) {
        guard !configuration.brokers.isEmpty else {
            throw LyceumError(code: .invalidConfiguration, message: "no broker endpoint given", service: "", op: "")
        }
        self.configuration = configuration
        do throws(ZMQError) {
            let inbox = try RequestInbox()
            let context = try Context()
            let thread = Thread { ConnectionLoop(configuration: configuration, inbox: inbox, context: context).run() }
            thread.name = "lyceum-client"
            thread.start()
            caller = RequestSender(inbox: inbox)
        } catch {
            throw LyceumError(code: .invalidConfiguration, message: error.description, service: "", op: "")
        }
    }

    deinit { caller.inbox.close() }

    /// Each learner's library of books.
    public var books: BooksAPI { BooksAPI(caller: caller) }
    /// The course catalog, read-only.
    public var catalog: CatalogAPI { CatalogAPI(caller: caller) }
    /// Learners' progress through courses.
    public var progress: ProgressAPI { ProgressAPI(caller: caller) }

    /// Stops the client's thread; calls still waiting fail with ``LyceumError/Code/closed``, and
    /// later calls fail at once.
    public func close() { caller.inbox.close() }
}

/// What the operation groups share: sending one request and decoding its reply.
struct RequestSender: Sendable {
    let inbox: RequestInbox

    /// Sends `op` with `parameters` to `service` and decodes the reply's result. A write gets a
    /// `request_id` (the caller's, or a new one) that all its attempts share.
    func call<Result: ReplyResult>(
        _ service: String, _ op: String, _ parameters: KeyValuePairs<String, JSONValue?> = [:],
        write requestID: RequestIDPolicy = .none, as: Result.Type = Result.self
    ) async throws(LyceumError) -> Result {
        var members = parameters.map { (name: $0.key, value: $0.value) }
        switch requestID {
        case .none: break
        case .generated: members.append(("request_id", .string(Self.newRequestID())))
        case .given(let id): members.append(("request_id", .string(id)))
        }
        let body = RequestBody(op: op, parameters: members).encoded()
        let outcome = await withCheckedContinuation { continuation in
            inbox.submit(PendingCall(service: service, op: op, body: body, outcome: continuation))
        }
        switch outcome {
        case .success(let frame): return try ReplyEnvelope.decode(frame, as: Result.self, service: service, op: op)
        case .failure(let error): throw error
        }
    }

    /// `swift-` and a random UUID: 42 characters of the contract's `request_id` alphabet.
    static func newRequestID() -> String { "swift-" + UUID().uuidString.lowercased() }
}

/// Whether a request is a write, and whose `request_id` it carries.
enum RequestIDPolicy {
    /// A read: no `request_id`.
    case none
    /// A write with a new `request_id`.
    case generated
    /// A write with the caller's `request_id`.
    case given(String)

    /// The policy of a write whose caller may have given an id.
    static func write(_ id: String?) -> RequestIDPolicy { id.map(RequestIDPolicy.given) ?? .generated }
}
