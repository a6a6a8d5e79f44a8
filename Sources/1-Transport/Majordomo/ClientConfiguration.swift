import ZeroMQ

/// Timeout and retries of a ``Client`` or ``AsyncClient`` (the Lazy Pirate pattern); every
/// default is documented in `protocol/majordomo.md`.
public struct ClientConfiguration: Sendable {
    /// How long one attempt waits for its reply before the socket is closed and the request
    /// sent again on a new one. Default: 2500 ms.
    public var timeout: Duration
    /// Attempts per request, the first included. Default: 3.
    public var attempts: Int
    /// Largest frame accepted from the broker (`ZMQ_MAXMSGSIZE`). Default: 4 MiB.
    public var maxFrameSize: Int64
    /// How the DEALER authenticates and encrypts: `.curveClient` for a CURVE broker; `.plaintext`
    /// (the default) otherwise.
    public var security: SocketSecurity

    /// Creates a configuration; each argument defaults to the value documented on its property.
    public init(timeout: Duration = .milliseconds(2500), attempts: Int = 3, maxFrameSize: Int64 = 4 << 20,
                security: SocketSecurity = .plaintext) {
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.maxFrameSize = maxFrameSize
        self.security = security
    }
}
