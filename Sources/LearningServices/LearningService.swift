/// One Majordomo service's request handler: a frame in, a frame out. Safe to call from several
/// worker threads at once; never throws, traps or blocks on anything but the journal.
public protocol LearningService: Sendable {
    /// The Majordomo service name, e.g. `books`.
    var name: String { get }
    /// The reply frame for one request frame.
    func handle(_ request: [UInt8]) -> [UInt8]
}

extension ServiceError {
    /// The error reply frame `{"ok":false,"error":…}` for this error, for callers that refuse a
    /// request before any service sees it (e.g. a message that is not exactly one frame).
    public var replyFrame: [UInt8] { Reply.failure(self) }
}
