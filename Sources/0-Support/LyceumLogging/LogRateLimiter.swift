import Synchronization

/// Decides which lines below ``LogLevel/critical`` are written: a token bucket per component and
/// message, holding up to one second of lines and refilled at `linesPerSecond`, so that a peer
/// that makes the same line happen a million times a second costs a few lines a second. What a
/// bucket refuses is counted, and ``takeSuppressed()`` hands the counts over for the summary lines.
///
/// The check is one short lock and a dictionary look-up; the refused line's fields are never
/// evaluated. The table holds at most ``maxKeys`` buckets: log messages are fixed texts, so that
/// bound is never reached in practice, and past it the lines of new messages share one bucket.
final class LogRateLimiter: Sendable {
    /// A component and the fixed message of a line.
    struct Key: Hashable, Sendable {
        let component: String
        let message: String
    }

    /// Lines a bucket refused since the last summary.
    struct Suppressed: Equatable, Sendable {
        let key: Key
        let level: LogLevel
        let count: Int
    }

    private struct Bucket {
        /// Lines the bucket may still write, in millionths of a line.
        var tokens: Int
        var refilledAt: UInt64
        var suppressed = 0
        var level = LogLevel.trace
    }

    /// The most buckets kept; lines of messages beyond them share ``overflowKey``'s bucket.
    static let maxKeys = 1024
    static let overflowKey = Key(component: "logging", message: "(messages beyond the rate limiter's table)")
    private static let unit = 1_000_000

    private let buckets = Mutex([Key: Bucket]())

    init() {}

    /// Whether a line of `component` and `message` at `level` may be written at `now`
    /// (nanoseconds of a monotonic clock) under a limit of `linesPerSecond`; 0 means no limit.
    func admit(component: String, message: String, level: LogLevel, now: UInt64, linesPerSecond: Int) -> Bool {
        guard linesPerSecond > 0 else { return true }
        let capacity = linesPerSecond * Self.unit
        return buckets.withLock { buckets in
            var key = Key(component: component, message: message)
            if buckets[key] == nil, buckets.count >= Self.maxKeys { key = Self.overflowKey }
            var bucket = buckets[key] ?? Bucket(tokens: capacity, refilledAt: now)
            let elapsed = now > bucket.refilledAt ? now - bucket.refilledAt : 0
            // Nanoseconds times lines per second gives millionths of a line after / 1000.
            let earned = elapsed >= 1_000_000_000 ? capacity : Int(elapsed) * linesPerSecond / 1000
            bucket.tokens = min(capacity, bucket.tokens + earned)
            bucket.refilledAt = now
            let admitted = bucket.tokens >= Self.unit
            if admitted {
                bucket.tokens -= Self.unit
            } else {
                bucket.suppressed += 1
                bucket.level = max(bucket.level, level)
            }
            buckets[key] = bucket
            return admitted
        }
    }

    /// The lines refused since the last call, per component and message; their counts start again at zero.
    func takeSuppressed() -> [Suppressed] {
        buckets.withLock { buckets in
            var taken: [Suppressed] = []
            for (key, bucket) in buckets where bucket.suppressed > 0 {
                taken.append(Suppressed(key: key, level: bucket.level, count: bucket.suppressed))
                buckets[key]?.suppressed = 0
                buckets[key]?.level = .trace
            }
            return taken
        }
    }
}
