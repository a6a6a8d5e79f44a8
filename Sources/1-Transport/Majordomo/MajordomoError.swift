import ZeroMQ

/// Why a Majordomo call or service failed, with the service and endpoint involved.
public struct MajordomoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, named so that callers can act on it.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A short stable snake_case name, as written in logs (`timed_out`).
        public let rawValue: String
        /// Wraps a name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The broker accepted the request but no reply came within the timeout, on every attempt.
        public static let timedOut = Code(rawValue: "timed_out")
        /// The broker answered that no worker serves the service.
        public static let serviceUnknown = Code(rawValue: "service_unknown")
        /// No connection to the broker could be made on any attempt.
        public static let brokerUnreachable = Code(rawValue: "broker_unreachable")
        /// The broker's queue for the service was full; try again later.
        public static let queueFull = Code(rawValue: "queue_full")
        /// The broker holds as many pending requests as it may; try again later.
        public static let brokerOverloaded = Code(rawValue: "broker_overloaded")
        /// The broker refused the request: the caller's key may not call this service.
        public static let forbidden = Code(rawValue: "forbidden")
        /// The broker, or the worker, did not know the caller's key (not authorised, or revoked
        /// since the connection was made).
        public static let unauthenticated = Code(rawValue: "unauthenticated")
        /// The broker refused the request: its service name is no 7/MDP service name (too long,
        /// or not printable ASCII; ``MDP/serviceNameProblem(_:)``).
        public static let badRequest = Code(rawValue: "bad_request")
        /// An asynchronous client already has as many requests in flight as it may.
        public static let tooManyInFlight = Code(rawValue: "too_many_in_flight")
        /// An argument cannot be sent as it is, such as an empty service name.
        public static let invalidArgument = Code(rawValue: "invalid_argument")
        /// A libzmq call failed; ``MajordomoError/socketError`` says which.
        public static let socket = Code(rawValue: "socket")
        /// The process ran out of a resource such as file descriptors.
        public static let resourceExhausted = Code(rawValue: "resource_exhausted")

        /// The name.
        public var description: String { rawValue }

        /// Whether another broker may do better: this one was unreachable, did not answer in
        /// time, or had no worker for the service (it may have just restarted, before the
        /// workers registered again). Clients given several brokers fail over on these; every
        /// other code is the answer.
        public var callsForAnotherBroker: Bool { [Code.brokerUnreachable, .timedOut, .serviceUnknown].contains(self) }

        /// Whether the broker answered, refusing the request (a ``BrokerRejection``): a reply
        /// came, unlike ``timedOut`` or ``brokerUnreachable``, and nothing was applied.
        public var isBrokerRejection: Bool { BrokerRejection.Code.allCases.contains { $0.errorCode == self } }
    }

    /// What went wrong.
    public let code: Code
    /// The service the request was for, when there was one.
    public let service: String?
    /// The broker endpoint involved, when there was one.
    public let endpoint: String?
    /// A sentence for a person.
    public let detail: String
    /// The libzmq failure behind a ``Code/socket`` error.
    public let socketError: ZMQError?

    /// Creates an error.
    public init(code: Code, service: String? = nil, endpoint: String? = nil, detail: String, socketError: ZMQError? = nil) {
        self.code = code
        self.service = service
        self.endpoint = endpoint
        self.detail = detail
        self.socketError = socketError
    }

    /// Wraps a libzmq failure.
    init(_ error: ZMQError, service: String? = nil) {
        self.init(code: .socket, service: service, endpoint: error.endpoint, detail: error.description, socketError: error)
    }

    /// `code [service] [endpoint]: detail`.
    public var description: String {
        var text = code.rawValue
        if let service { text += " service=\(service)" }
        if let endpoint { text += " endpoint=\(endpoint)" }
        return text + ": " + detail
    }
}
