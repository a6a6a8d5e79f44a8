import JSON

/// A refused request, as every service reports it: a stable code, a sentence, and the JSONPath
/// of the offending request field when there is one.
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable error codes of the contract; clients switch on the raw value.
    public enum Code: String, Sendable, CaseIterable {
        /// The request is malformed: not JSON, wrong shape, wrong type, out of range, unknown field.
        case badRequest = "bad_request"
        /// The named entity does not exist.
        case notFound = "not_found"
        /// The request contradicts current state (stale version, reused request id).
        case conflict
        /// The `op` is not an operation of this service.
        case unknownOp = "unknown_op"
        /// The request exceeds a size limit.
        case tooLarge = "too_large"
        /// The service cannot make the write durable now; nothing was applied. Retry later.
        case unavailable
        /// A defect on the server; the message says what.
        case `internal`
        /// The caller's key may not perform the operation: another learner's data for a
        /// `learner` key, a trusted operation for a key without that right. Contract version 2.
        case forbidden
        /// The write would take the learner's data past a per-learner limit of the server's
        /// (`max-books-per-learner`, `max-library-bytes`); the message names it. Nothing was
        /// applied. Contract version 3.
        case limitExceeded = "limit_exceeded"
        /// The server's storage is full: the write was refused before anything was applied, and
        /// reads go on. Writes work again by themselves once space returns. Contract version 4.
        case storageFull = "storage_full"

        /// The contract version that introduced the code; a client speaking an older one gets
        /// `bad_request` instead (see `ServiceError.forContractVersion(_:)`).
        var contractVersion: Int {
            switch self {
            case .forbidden: 2
            case .limitExceeded: 3
            case .storageFull: 4
            case .badRequest, .notFound, .conflict, .unknownOp, .tooLarge, .unavailable, .internal: 1
            }
        }
    }

    /// The stable code clients switch on.
    public let code: Code
    /// What went wrong, for people.
    public let message: String
    /// JSONPath of the offending field in the request, e.g. `$.title`.
    public let field: String?

    /// An error with `code`, a sentence, and the JSONPath of the field at fault if any.
    public init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    /// A `bad_request` for a field that has the wrong shape.
    public init(_ error: JSONReadError) {
        self.init(.badRequest, "\(error.path) \(error.message)", field: error.path)
    }

    /// The error as a client speaking contract `version` may be told it: a code newer than that
    /// version becomes `bad_request` with the same message and field; `nil` (no `v` in the
    /// request) means the newest version.
    func forContractVersion(_ version: Int?) -> ServiceError {
        guard let version, code.contractVersion > version else { return self }
        return ServiceError(.badRequest, message, field: field)
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }

    /// The `error` object of a reply.
    var json: JSONValue {
        var object = JSONObject()
        object.append("code", .string(code.rawValue))
        object.append("message", .string(message))
        if let field { object.append("field", .string(field)) }
        return .object(object)
    }
}
