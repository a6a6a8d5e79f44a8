/// How often peers prove they are alive, and how much silence ends a conversation (7/MDP's
/// heartbeating). Broker and worker must agree on both values.
public struct Heartbeat: Equatable, Sendable {
    /// Time between heartbeats sent to an idle peer. Default: 2500 ms.
    public var interval: Duration
    /// How many intervals of silence mean the peer is gone. Default: 3.
    public var liveness: Int

    /// Creates heartbeat timings; the defaults are the Majordomo guide's. The interval is
    /// kept within 1 ms…1 day and the liveness within 1…1000, so that no value can make a
    /// peer spin or overflow its clock arithmetic.
    public init(interval: Duration = .milliseconds(2500), liveness: Int = 3) {
        self.interval = min(max(interval, .milliseconds(1)), .seconds(86_400))
        self.liveness = min(max(1, liveness), 1000)
    }

    /// Silence after which a peer is considered gone: `interval × liveness`.
    public var expiry: Duration { interval * liveness }
}
