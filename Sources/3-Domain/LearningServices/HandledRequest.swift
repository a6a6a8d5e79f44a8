/// What a service hands back for one request, once the reply may be sent: the reply frame; for
/// a write that changed something, the event to publish (`nil` otherwise); the ticket of the
/// record the reply depends on (for a retry, the last record appended before it; `nil` for reads
/// and refused requests; whenever it is set, that record is durable); and what the request was
/// and how it ended, so that whoever counts or logs requests never parses a frame again.
public struct HandledRequest<Event: Sendable>: Sendable {
    /// The reply frame.
    public let reply: [UInt8]
    /// The event of a write that changed something.
    public let event: Event?
    /// The ticket of the record the reply depends on.
    public let commit: CommitTicket?
    /// The request's `op` as the client sent it; `nil` when the frame was no request envelope.
    /// Untrusted: any string up to 64 characters (see `operationLabel`).
    public let op: String?
    /// The request's `request_id`, when it had one.
    public let requestID: String?
    /// The error code of an error reply, as the service decided it (a `forbidden` stays
    /// `forbidden` here even when a contract version 1 client is sent `bad_request`); `nil` for a
    /// success.
    public let errorCode: ServiceError.Code?

    /// A handled request with exactly these parts.
    public init(
        reply: [UInt8], event: Event? = nil, commit: CommitTicket? = nil, op: String?, requestID: String? = nil,
        errorCode: ServiceError.Code? = nil
    ) {
        self.reply = reply
        self.event = event
        self.commit = commit
        self.op = op
        self.requestID = requestID
        self.errorCode = errorCode
    }

    /// The successful `reply` frame to `request` (a read), with no event and no commit.
    init(reply: [UInt8], to request: Request) {
        self.init(reply: reply, op: request.op, requestID: request.requestID)
    }

    /// The error reply of `error` to `request` (`nil` when the frame was not a request), in the
    /// contract version the request states.
    init(_ error: ServiceError, to request: Request?) {
        self.init(
            reply: Reply.failure(error.forContractVersion(request?.version)), op: request?.op, requestID: request?.requestID,
            errorCode: error.code)
    }

    /// The operation as a metric label: `op` when the service knew it, else `invalid`, so that
    /// a client cannot make up label values (a `bad_request` may be any string in `op`).
    public var operationLabel: String {
        switch errorCode {
        case .badRequest?, .unknownOp?, .tooLarge?: "invalid"
        default: op ?? "invalid"
        }
    }
}
