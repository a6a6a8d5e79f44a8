/// Why a call to the coordination service (etcd's JSON gateway) or a leadership built on it
/// failed: what kind of failure, at which endpoint, during which operation, and the detail a
/// user needs (errno text, etcd's own message, the limit that was exceeded).
public struct CoordinationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; its raw value is the snake_case code written in logs.
    public enum Kind: String, Sendable, Equatable {
        /// An endpoint that cannot be parsed (`http://HOST:PORT` expected).
        case badEndpoint = "bad_endpoint"
        /// A connection could not be made (refused, no route, name not resolved).
        case unreachable
        /// Nothing (or not all) arrived within the call's time limit.
        case timedOut = "timed_out"
        /// The connection ended or failed in the middle of a response.
        case connectionLost = "connection_lost"
        /// The response (head, body or a streamed message) is larger than the configured limit.
        case responseTooLarge = "response_too_large"
        /// The response is not the HTTP/1.1 or JSON that etcd's gateway sends.
        case malformedResponse = "malformed_response"
        /// etcd answered with an error of its own (its gRPC code and message in the detail).
        case rejected
        /// The lease is gone: etcd says it expired or was revoked.
        case leaseExpired = "lease_expired"
        /// The lease could not be renewed before the end of the window in which its holder may
        /// act on it (keep-alive period + 2 × retry), so its holder stops acknowledging.
        case leaseNotRenewed = "lease_not_renewed"
        /// Lease timings that break `keepAlivePeriod + 2 × retry ≤ ttl`, or other invalid settings.
        case invalidSettings = "invalid_settings"
    }

    /// What failed.
    public let kind: Kind
    /// The endpoint involved (`http://127.0.0.1:2379`), or `""` when none is.
    public let endpoint: String
    /// The operation: the gateway path (`/v3/kv/txn`) or the step (`keepalive`, `campaign`).
    public let operation: String
    /// What a user needs to act: errno text, etcd's message, a limit in bytes.
    public let detail: String

    /// A failure of `kind` at `endpoint` during `operation`.
    public init(_ kind: Kind, endpoint: String = "", operation: String, detail: String) {
        self.kind = kind
        self.endpoint = endpoint
        self.operation = operation
        self.detail = detail
    }

    /// Whether another endpoint (or a later attempt) may succeed where this one failed: the
    /// request may not have reached etcd, or its answer was lost on the way.
    public var isTransient: Bool {
        switch kind {
        case .unreachable, .timedOut, .connectionLost: true
        case .rejected: detail.hasPrefix("code 14 ") // gRPC UNAVAILABLE: no leader, shutting down
        default: false
        }
    }

    /// `kind_code at endpoint (operation): detail`.
    public var description: String {
        let place = endpoint.isEmpty ? operation : "\(endpoint) \(operation)"
        return "\(kind.rawValue) at \(place): \(detail)"
    }
}
