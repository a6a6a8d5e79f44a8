/// One Majordomo service's request handler: a frame in, a frame out. Safe to call from several
/// worker threads at once; never throws, traps or blocks on anything but the journal.
public protocol LearningService: Sendable {
    /// The Majordomo service name, e.g. `books`.
    var name: String { get }
    /// The reply frame for one request frame.
    func handle(_ request: [UInt8]) -> [UInt8]
}
