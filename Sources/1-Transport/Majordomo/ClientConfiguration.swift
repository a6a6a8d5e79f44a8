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
    /// CURVE keys for an encrypted, authenticated connection to a CURVE broker; `nil` (the
    /// default) connects in plain text.
    public var curve: CurveClientKeys?

    /// Creates a configuration; each argument defaults to the value documented on its property.
    public init(timeout: Duration = .milliseconds(2500), attempts: Int = 3, maxFrameSize: Int64 = 4 << 20, curve: CurveClientKeys? = nil) {
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.maxFrameSize = maxFrameSize
        self.curve = curve
    }
}
