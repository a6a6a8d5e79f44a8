import Majordomo

/// Why a Lyceum call failed: the contract's error code (protocol/README.md, "Error codes"), the
/// broker's rejection, or the client's own failure, with the service, operation and broker
/// endpoint involved.
public struct LyceumError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, named so that callers can switch on it.
    public enum Code: Equatable, Hashable, Sendable, CustomStringConvertible {
        /// The request is malformed or a value is out of range; ``LyceumError/field`` names it.
        case badRequest
        /// The course, lesson, quiz or book does not exist.
        case notFound
        /// A stale `expected_version`, or a `request_id` reused for another request.
        case conflict
        /// The service has no such operation.
        case unknownOp
        /// The request frame is larger than the server accepts.
        case tooLarge
        /// The write could not be made durable; the client already retried it with the same `request_id`.
        case unavailable
        /// A defect on the server.
        case `internal`
        /// The caller is known but may not do this.
        case forbidden
        /// The caller could not be authenticated.
        case unauthenticated
        /// The write would take the learner's data past a per-learner limit of the server's;
        /// the message names it. Nothing was applied; retrying does not help until the learner
        /// deletes something.
        case limitExceeded
        /// The server's storage is full: nothing was applied; writes work again once space is
        /// freed (contract version 4).
        case storageFull
        /// The broker's queue for the service was full on every attempt.
        case queueFull
        /// The broker held as many requests as it may on every attempt.
        case overloaded
        /// No broker had a worker for the service.
        case serviceUnknown
        /// A broker accepted the request but no reply came on any attempt.
        case timedOut
        /// No broker could be reached on any attempt.
        case brokerUnreachable
        /// The reply is not the contract's JSON, or lacks what the operation's result must hold.
        case invalidReply
        /// The client was closed before the reply came.
        case closed
        /// The client cannot work as configured (no broker, no event endpoints, no sockets).
        case invalidConfiguration
        /// A code this client does not know yet, as the server spelled it.
        case other(String)

        /// The code a server's `error.code` names; an unknown one is kept as ``other(_:)``.
        public init(wireName: String) {
            self = switch wireName {
            case "bad_request": .badRequest
            case "not_found": .notFound
            case "conflict": .conflict
            case "unknown_op": .unknownOp
            case "too_large": .tooLarge
            case "unavailable": .unavailable
            case "internal": .internal
            case "forbidden": .forbidden
            case "unauthenticated": .unauthenticated
            case "limit_exceeded": .limitExceeded
            case "storage_full": .storageFull
            default: .other(wireName)
            }
        }

        /// The snake_case name, as on the wire for the server's codes.
        public var description: String {
            switch self {
            case .badRequest: "bad_request"
            case .notFound: "not_found"
            case .conflict: "conflict"
            case .unknownOp: "unknown_op"
            case .tooLarge: "too_large"
            case .unavailable: "unavailable"
            case .internal: "internal"
            case .forbidden: "forbidden"
            case .unauthenticated: "unauthenticated"
            case .limitExceeded: "limit_exceeded"
            case .storageFull: "storage_full"
            case .queueFull: "queue_full"
            case .overloaded: "overloaded"
            case .serviceUnknown: "service_unknown"
            case .timedOut: "timed_out"
            case .brokerUnreachable: "broker_unreachable"
            case .invalidReply: "invalid_reply"
            case .closed: "closed"
            case .invalidConfiguration: "invalid_configuration"
            case .other(let name): name
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for a person (the server's `message`, or the client's own).
    public var message: String
    /// The JSONPath of the request member at fault, when the server named one.
    public var field: String?
    /// The service called.
    public var service: String
    /// The operation called.
    public var op: String
    /// The broker that answered or failed last, when one was involved.
    public var endpoint: String?

    /// Creates an error.
    public init(code: Code, message: String, field: String? = nil, service: String, op: String, endpoint: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.service = service
        self.op = op
        self.endpoint = endpoint
    }

    /// `code service.op [endpoint] [field]: message`.
    public var description: String {
        var text = "\(code) \(service).\(op)"
        if let endpoint { text += " endpoint=\(endpoint)" }
        if let field { text += " field=\(field)" }
        return text + ": " + message
    }

    /// The client-side error for a Majordomo failure of `service.op`.
    init(_ error: MajordomoError, op: String) {
        let code: Code = switch error.code {
        case .queueFull: .queueFull
        case .brokerOverloaded: .overloaded
        case .serviceUnknown: .serviceUnknown
        case .timedOut: .timedOut
        case .brokerUnreachable: .brokerUnreachable
        case .forbidden: .forbidden
        case .unauthenticated: .unauthenticated
        case .badRequest: .badRequest
        default: .other(error.code.rawValue)
        }
        self.init(code: code, message: error.detail, service: error.service ?? "", op: op, endpoint: error.endpoint)
    }
}
