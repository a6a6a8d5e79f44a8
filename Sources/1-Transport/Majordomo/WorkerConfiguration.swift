import LyceumLifecycle
import ZeroMQ

/// Timings and security of a ``WorkerPool``'s sessions (and a ``WorkerSession``'s); every default is documented in `protocol/majordomo.md`.
public struct WorkerConfiguration: Sendable {
    /// Heartbeats sent to the broker when idle, and the silence after which the broker is
    /// considered dead. Default: 2500 ms × 3.
    public var heartbeat: Heartbeat
    /// Wait before the first reconnection after the broker died or sent DISCONNECT; doubled
    /// after each conversation in which the broker sent no REQUEST or HEARTBEAT. Default: 1000 ms.
    public var reconnectInitialDelay: Duration
    /// Upper bound of the doubling reconnection wait. Default: 32 s.
    public var reconnectMaximumDelay: Duration
    /// How long, after a shutdown, the context's termination (when its last user releases it)
    /// may wait to deliver the last REPLY and DISCONNECT. Default: 1000 ms.
    public var shutdownLinger: Duration
    /// Largest frame accepted from the broker (`ZMQ_MAXMSGSIZE`). Default: 4 MiB.
    public var maxFrameSize: Int64
    /// How long a shutdown waits for the replies of requests in hand before the sessions leave
    /// without them (their clients then retry or time out). Default: 30 s.
    public var drainTimeout: Duration
    /// How each session's socket authenticates to the broker, applied before it connects.
    /// Default: plaintext.
    public var security: SocketSecurity
    /// Whether the sessions believe the caller identity the broker appends to each request's
    /// client address (protocol/majordomo.md, "Callers and workers"), and refuse requests that
    /// carry none with the error reply `unauthenticated`. Set it only when `security` is a
    /// CURVE client of the broker's own server key, so that the identity can only have come from
    /// that broker; when `false` every caller is `Caller.unverified`. Default: `false`.
    public var trustsCallerIdentities: Bool
    /// systemd's watchdog, petted on every pass of the pool's loop (which then waits at most
    /// its pet interval), so that a pool whose thread is wedged stops petting it. Default: none.
    public var watchdog: Watchdog?
    /// The dialect the sessions speak to their brokers: 7/MDP, or 18/MDP in majortomo's framing
    /// (``MDPDialect/majortomo``), which majortomo's broker takes and Lyceum's broker too. A pool
    /// speaking 18/MDP answers each request with one FINAL. Default: 7/MDP.
    public var dialect: MDPDialect = .mdp7
    /// Called on the pool's thread with `true` when a broker first accepts one of its sessions
    /// (heartbeats or serves it) while none was accepted, and with `false` when none is accepted
    /// any more (each broker went silent or sent DISCONNECT). Default: none.
    public var registrationChanged: (@Sendable (Bool) -> Void)?

    /// Creates a configuration; each argument defaults to the value documented on its property.
    public init(
        heartbeat: Heartbeat = Heartbeat(),
        reconnectInitialDelay: Duration = .milliseconds(1000),
        reconnectMaximumDelay: Duration = .seconds(32),
        shutdownLinger: Duration = .milliseconds(1000),
        maxFrameSize: Int64 = 4 << 20,
        drainTimeout: Duration = .seconds(30),
        security: SocketSecurity = .plaintext,
        trustsCallerIdentities: Bool = false
    ) {
        self.heartbeat = heartbeat
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaximumDelay = max(reconnectMaximumDelay, reconnectInitialDelay)
        self.shutdownLinger = shutdownLinger
        self.maxFrameSize = maxFrameSize
        self.drainTimeout = drainTimeout
        self.security = security
        self.trustsCallerIdentities = trustsCallerIdentities
    }
}
