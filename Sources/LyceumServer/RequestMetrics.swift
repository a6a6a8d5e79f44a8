import Synchronization

/// Counts of the requests a process's workers handled: per service and operation, a count and
/// a latency histogram; per service and error code, a count. Safe to record from every worker
/// thread; one short lock per request.
public final class RequestMetrics: Sendable {
    /// Upper bounds, in seconds, of the latency histogram's buckets (`+Inf` is implied).
    public static let latencyBuckets: [Double] = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    /// A service and an operation, or a service and an error code.
    public struct Key: Hashable, Sendable, Comparable {
        /// The service name.
        public let service: String
        /// The operation or the error code.
        public let label: String

        /// Orders by service, then label, so that the exposition is stable.
        public static func < (lhs: Key, rhs: Key) -> Bool { (lhs.service, lhs.label) < (rhs.service, rhs.label) }
    }

    /// One operation's requests: how many, their total latency, and per-bucket counts.
    public struct Latencies: Sendable {
        /// Requests handled.
        public internal(set) var count: UInt64 = 0
        /// The sum of their latencies, in seconds.
        public internal(set) var sum: Double = 0
        /// Requests at most as slow as each bucket's bound (not cumulative).
        public internal(set) var buckets = [UInt64](repeating: 0, count: RequestMetrics.latencyBuckets.count)
    }

    private let state = Mutex((requests: [Key: Latencies](), errors: [Key: UInt64]()))

    /// Empty counts.
    public init() {}

    /// Records one request to `service`'s `op` that took `seconds`, failing with `errorCode` if given.
    public func record(service: String, op: String, seconds: Double, errorCode: String?) {
        let bucket = Self.latencyBuckets.firstIndex { seconds <= $0 }
        state.withLock { state in
            let key = Key(service: service, label: op)
            var latencies = state.requests[key] ?? Latencies()
            latencies.count += 1
            latencies.sum += seconds
            if let bucket { latencies.buckets[bucket] += 1 }
            state.requests[key] = latencies
            if let errorCode { state.errors[Key(service: service, label: errorCode), default: 0] += 1 }
        }
    }

    /// The requests recorded so far, by service and operation.
    public var requests: [Key: Latencies] { state.withLock { $0.requests } }
    /// The error replies recorded so far, by service and error code.
    public var errors: [Key: UInt64] { state.withLock { $0.errors } }
}
