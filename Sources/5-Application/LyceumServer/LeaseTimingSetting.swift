import Configuration
import Coordination

extension Settings {
    /// The lease timings of `lease-ttl`, `lease-keep-alive` and `lease-retry`, converted where
    /// they are applied; `checkConflicts()` has refused timings that break `LeaseRule`.
    public var leaseTiming: LeaseTiming {
        get throws(CoordinationError) { try LeaseTiming(ttlSeconds: leaseTTLSeconds, keepAlivePeriod: leaseKeepAlive, retry: leaseRetry) }
    }
}
