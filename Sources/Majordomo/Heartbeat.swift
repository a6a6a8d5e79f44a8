/// How often peers prove they are alive, and how much silence ends a conversation (7/MDP's
/// heartbeating). Broker and worker must agree on both values.
public struct Heartbeat: Equatable, Sendable {
    /// Time between heartbeats sent to an idle peer. Default: 2500 ms.
    public var interval: Duration
    /// How many intervals of silence mean the peer is gone. Default: 3.
    public var liveness: Int

    /// Creates heartbeat timings; the defaults are the Majordomo guide's. The interval is at
    /// least 1 ms and the liveness at least 1.
    public init(interval: Duration = .milliseconds(2500), liveness: Int = 3) {
        self.interval = max(interval, .milliseconds(1))
        self.liveness = max(1, liveness)
    }

    /// Silence after which a peer is considered gone: `interval × liveness`.
    public var expiry: Duration { interval * liveness }
}
