import LyceumSupport

/// The timings of a leader's lease, and the rule that makes a leader stop acting before its
/// lease can expire (Patroni's: keep-alive period + 2 × retry ≤ TTL).
///
/// A keep-alive renews the lease for `ttl` from the moment etcd handles it, which is after the
/// holder sent it. So a holder that counts from the moment it *sent* its last successful
/// keep-alive, and stops acting `keepAlivePeriod + 2 × retry` after it, stops while the lease
/// still runs: before etcd can delete its key and another candidate can take it.
public struct LeaseTiming: Sendable, Equatable {
    /// The lease's time to live, in whole seconds (what etcd grants).
    public let ttlSeconds: Int
    /// How long after a successful renewal the next one is sent.
    public let keepAlivePeriod: Duration
    /// How long a renewal may keep failing (each attempt bounded by it) before the holder gives up.
    public let retry: Duration

    /// Timings that satisfy `keepAlivePeriod + 2 × retry ≤ ttl`, or a typed error saying which does not.
    public init(ttlSeconds: Int, keepAlivePeriod: Duration, retry: Duration) throws(CoordinationError) {
        func refuse(_ detail: String) -> CoordinationError { CoordinationError(.invalidSettings, operation: "lease timing", detail: detail) }
        guard ttlSeconds >= 2 else { throw refuse("ttl \(ttlSeconds) s: etcd grants at least 2 s") }
        guard keepAlivePeriod > .zero, retry > .zero else { throw refuse("keep-alive period and retry must be positive") }
        guard LeaseRule.holds(ttl: .seconds(ttlSeconds), keepAlivePeriod: keepAlivePeriod, retry: retry) else {
            throw refuse("keep-alive period \(keepAlivePeriod) + 2 × retry \(retry) exceeds the ttl \(ttlSeconds) s")
        }
        self.ttlSeconds = ttlSeconds
        self.keepAlivePeriod = keepAlivePeriod
        self.retry = retry
    }

    /// 5 s leases renewed every second, each renewal given 2 s: a leader acts at most 5 s after its
    /// last renewal, and a dead leader's partitions are taken over after at most 5 s (one more
    /// TTL if etcd itself changes leader meanwhile: etcd then renews every lease in full).
    public static let standard = LeaseTiming(checked: 5, .seconds(1), .seconds(2))

    private init(checked ttlSeconds: Int, _ keepAlivePeriod: Duration, _ retry: Duration) {
        self.ttlSeconds = ttlSeconds
        self.keepAlivePeriod = keepAlivePeriod
        self.retry = retry
    }

    /// The lease's time to live.
    public var ttl: Duration { .seconds(ttlSeconds) }

    /// How long after sending its last successful renewal a holder may still act on the lease.
    public var actingWindow: Duration { keepAlivePeriod + retry * 2 }
}
