import ZeroMQ

/// A failure of the events machinery, with the endpoint and detail a user needs to act on it.
public struct EventsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A socket call failed (bind, connect, send, receive).
        public static let socket = Code(rawValue: "socket")
        /// An argument or option was invalid.
        public static let invalidArgument = Code(rawValue: "invalid_argument")
        /// A peer did not answer in time.
        public static let timedOut = Code(rawValue: "timed_out")
        /// A peer sent something that does not follow protocol/events.md.
        public static let malformed = Code(rawValue: "malformed")
        /// The operating system refused a resource (an eventfd).
        public static let resourceExhausted = Code(rawValue: "resource_exhausted")
        /// The caller asked to stop (``ProgressSubscriber/Options/wakeup``) while it waited.
        public static let stopped = Code(rawValue: "stopped")
        /// The code's name.
        public var description: String { rawValue }
    }

    /// What kind of failure.
    public let code: Code
    /// The endpoint involved, when there was one.
    public let endpoint: String?
    /// What happened, for a person.
    public let detail: String

    /// An error with these fields.
    public init(_ code: Code, endpoint: String? = nil, _ detail: String) {
        self.code = code
        self.endpoint = endpoint
        self.detail = detail
    }

    /// Wraps a socket failure.
    public init(_ error: ZMQError) {
        self.init(.socket, endpoint: error.endpoint, error.description)
    }

    /// `code [endpoint]: detail`.
    public var description: String {
        if let endpoint { return "\(code) \(endpoint): \(detail)" }
        return "\(code): \(detail)"
    }
}
