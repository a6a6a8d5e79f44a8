/// One Majordomo service's request handler: a frame in, a frame out, possibly later. Safe to call
/// from several threads at once; never throws or traps, and `handle(_:reply:)` waits for nothing
/// but the service's state lock.
public protocol LearningService: Sendable {
    /// The Majordomo service name, e.g. `books`.
    var name: String { get }

    /// Answers one request frame by calling `reply` exactly once with the reply frame. Reads and
    /// refused requests are answered on the calling thread before this returns; a write is
    /// answered once it is durable, which may be later and on a thread the change log owns (the
    /// journal's acknowledger thread under the `always` policy). `reply` must return quickly and
    /// must not wait for another reply of the same service.
    func handle(_ request: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void)

    /// The reply frame for one request frame, waiting for it as long as the write takes to become
    /// durable: for tests and callers that spend a thread per request. Never call it from inside
    /// a `reply` callback, which would wait for itself.
    func handle(_ request: [UInt8]) -> [UInt8]
}

extension LearningService {
    /// Waits for `handle(_:reply:)`'s reply; see the protocol requirement.
    public func handle(_ request: [UInt8]) -> [UInt8] {
        waitForCallback { handle(request, reply: $0) }
    }
}

extension ServiceError {
    /// The error reply frame `{"ok":false,"error":…}` for this error, for callers that refuse a
    /// request before any service sees it (e.g. a message that is not exactly one frame).
    public var replyFrame: [UInt8] { Reply.failure(self) }
}
