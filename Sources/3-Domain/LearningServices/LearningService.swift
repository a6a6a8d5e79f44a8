import Access
import JSON
import Journal

/// One Majordomo service's request handler: a frame in, a frame out, possibly later. Safe to call
/// from several threads at once; never throws or traps, and waits for nothing but the service's
/// state lock.
public protocol LearningService: Sendable {
    /// What the service's durable writes publish; `Never` for a service without events.
    associatedtype Event: Sendable = Never

    /// The Majordomo service name, e.g. `books`.
    var name: String { get }

    /// Calls `completion` exactly once with the reply and what the request was (`HandledRequest`),
    /// for a request from `caller`: an operation the caller may not perform is refused with
    /// `forbidden` and changes nothing (`Caller.unverified` may do everything). Reads and refused requests complete on the calling thread before this returns; a write
    /// completes once it is durable, which may be later and on a thread the change log owns (under the
    /// `always` policy, the caller's own at the end of its batch, or the journal's acknowledger), with its event and ticket.
    /// `completion` must return quickly and must not wait for another reply of the same service.
    func handleWithCommit(_ request: [UInt8], caller: Caller, completion: @escaping @Sendable (HandledRequest<Event>) -> Void)

    /// The reply frame for one request frame from `caller`, waiting for it as long as the write
    /// takes to become durable: for tests and callers that spend a thread per request. Never call
    /// it from inside a completion, which would wait for itself.
    func handle(_ request: [UInt8], caller: Caller) -> [UInt8]
}

// The waiting helpers below default to `Caller.unverified` (security off) for tests and tools;
// the serving path calls the requirement above, which has no default, so it always names the caller.
extension LearningService {
    /// Answers one request frame from `caller` by calling `reply` exactly once with the reply
    /// frame, when `handleWithCommit(_:caller:completion:)` completes.
    public func handle(_ request: [UInt8], caller: Caller = .unverified, reply: @escaping @Sendable ([UInt8]) -> Void) {
        handleWithCommit(request, caller: caller) { reply($0.reply) }
    }

    /// Waits for `handleWithCommit(_:caller:completion:)`'s reply; see the protocol requirement.
    public func handle(_ request: [UInt8], caller: Caller = .unverified) -> [UInt8] {
        waitForCallback { handle(request, caller: caller, reply: $0) }
    }

    /// `handleWithCommit(_:caller:completion:)`'s result, waiting for it: for tests and callers
    /// that spend a thread per request. Never call it from inside a completion.
    public func handleWithCommit(_ request: [UInt8], caller: Caller = .unverified) -> HandledRequest<Event> {
        waitForCallback { handleWithCommit(request, caller: caller, completion: $0) }
    }
}

/// A service whose state is replayed from a journal and captured for its compaction.
public protocol JournaledService: LearningService {
    /// The state its journal replays into; its `apply` decodes values exactly as serving does.
    associatedtype State: JournalState

    /// The state together with the log's last sequence number (read under the service's write
    /// lock), both reflecting exactly the same writes: a journal compaction's capture. Throws
    /// when a journaled write could not be applied, which the state would miss.
    func captureState(lastSequence: () -> UInt64) throws(UndecodableValue) -> (state: State, sequence: UInt64)
}

extension ServiceError {
    /// The error reply frame `{"ok":false,"error":…}` for this error, for callers that refuse a
    /// request before any service sees it (e.g. a message that is not exactly one frame).
    public var replyFrame: [UInt8] { Reply.failure(self) }
}

extension JSONValue {
    /// The success reply frame `{"ok":true,"result":…}` with this value as its result, for
    /// callers that answer requests outside the learning services (a worker's node service).
    public var successReplyFrame: [UInt8] { Reply.success(self) }
}
