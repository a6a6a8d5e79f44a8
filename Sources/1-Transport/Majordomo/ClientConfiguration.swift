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
    /// How long an attempt of a ``Client`` waits for a connection to the broker (its handshake
    /// done) before it ends as `broker_unreachable`, when that is shorter than ``timeout``: a
    /// caller with another broker to try (`lyceum call`) need not wait a whole reply timeout
    /// for one that is down. Default: `nil`, the attempt's whole ``timeout``.
    public var connectTimeout: Duration?

    /// Creates a configuration; each argument defaults to the value documented on its property.
    public init(timeout: Duration = .milliseconds(2500), attempts: Int = 3, maxFrameSize: Int64 = 4 << 20,
                security: SocketSecurity = .plaintext, connectTimeout: Duration? = nil) {
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.maxFrameSize = maxFrameSize
        self.security = security
        self.connectTimeout = connectTimeout
    }

    /// How long an attempt waits for its connection: ``connectTimeout``, at most ``timeout``.
    var connectionWait: Duration { min(timeout, connectTimeout ?? timeout) }
}
