/// Patroni's rule for a leader's lease: keep-alive period + 2 × retry ≤ TTL, which makes a
/// holder stop acting before its lease can expire (`Coordination.LeaseTiming` says why). Stated
/// once, here, for the lease timings and for the settings that give them (`lease-ttl`,
/// `lease-keep-alive`, `lease-retry`), which are refused at start when they break it.
public enum LeaseRule {
    /// Whether a holder renewing every `keepAlivePeriod`, and retrying a failing renewal for
    /// `retry`, stops acting before a lease of `ttl` can expire.
    public static func holds(ttl: Duration, keepAlivePeriod: Duration, retry: Duration) -> Bool {
        keepAlivePeriod + retry * 2 <= ttl
    }
}
