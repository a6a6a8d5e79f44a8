import LyceumSupport
/// Latencies in microseconds from 1 µs to one hour, counted in log-linear buckets so that
/// every percentile it reports is within 0.4% of a recorded value (HdrHistogram's idea).
///
/// Values below 256 µs are counted exactly; above, each power of two is split into 128
/// equal buckets, so a bucket is never wider than 1/128 of the values it holds. Recording is
/// constant time and allocation free; histograms recorded on different threads ``merge(_:)``.
public struct LatencyHistogram: Sendable, Equatable {
    /// Sub-buckets per power of two above the exact range, as a power of two.
    private static let subBucketBits = 7
    private static let subBucketCount = 1 << subBucketBits
    /// Values below this are their own bucket.
    private static let exactLimit: UInt64 = 2 << subBucketBits
    /// The largest value kept; larger values are counted as this one.
    public static let highestTrackable: UInt64 = 3_600_000_000

    private var counts: [UInt64]
    /// Values recorded.
    public private(set) var count: UInt64 = 0
    /// The smallest value recorded, exact; 0 when empty.
    public private(set) var minimum: UInt64 = 0
    /// The largest value recorded, exact (up to ``highestTrackable``); 0 when empty.
    public private(set) var maximum: UInt64 = 0
    private var sum: Double = 0

    /// An empty histogram.
    public init() {
        counts = Array(repeating: 0, count: Self.bucketIndex(of: Self.highestTrackable) + 1)
    }

    /// Counts one latency of `microseconds`.
    public mutating func record(microseconds: UInt64) {
        let value = min(microseconds, Self.highestTrackable)
        counts[Self.bucketIndex(of: value)] += 1
        minimum = count == 0 ? value : min(minimum, value)
        maximum = max(maximum, value)
        count += 1
        sum += Double(value)
    }

    /// Counts one latency, rounded down to whole microseconds.
    public mutating func record(_ latency: Duration) {
        record(microseconds: UInt64(clamping: latency.microseconds))
    }

    /// Adds every value of `other`, as if it had been recorded here.
    public mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        for index in counts.indices where other.counts[index] != 0 { counts[index] += other.counts[index] }
        minimum = count == 0 ? other.minimum : min(minimum, other.minimum)
        maximum = max(maximum, other.maximum)
        count += other.count
        sum += other.sum
    }

    /// The arithmetic mean in microseconds; 0 when empty.
    public var mean: Double { count == 0 ? 0 : sum / Double(count) }

    /// The value at `percentile` (0–100): the smallest value that at least that share of the
    /// recorded values do not exceed, within the bucket precision; the exact maximum at 100.
    public func value(atPercentile percentile: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let share = min(max(percentile, 0), 100) / 100
        let rank = max(1, UInt64((share * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount != 0 {
            seen += bucketCount
            if seen >= rank { return min(max(Self.middleOfBucket(index), minimum), maximum) }
        }
        return maximum
    }

    /// The non-empty buckets as (value, count) pairs, values ascending: what a plot or an
    /// export needs to rebuild the distribution.
    public var buckets: [(value: UInt64, count: UInt64)] {
        counts.enumerated().compactMap { index, bucketCount in
            bucketCount == 0 ? nil : (Self.middleOfBucket(index), bucketCount)
        }
    }

    static func bucketIndex(of value: UInt64) -> Int {
        guard value >= exactLimit else { return Int(value) }
        let highestBit = 63 - value.leadingZeroBitCount
        let shift = highestBit - subBucketBits
        let subBucket = Int(value >> UInt64(shift)) - subBucketCount
        return Int(exactLimit) + (shift - 1) * subBucketCount + subBucket
    }

    /// The middle of the values a bucket holds, the estimate with the smallest worst-case error.
    static func middleOfBucket(_ index: Int) -> UInt64 {
        guard index >= Int(exactLimit) else { return UInt64(index) }
        let offset = index - Int(exactLimit)
        let shift = offset / subBucketCount + 1
        let lowest = UInt64(offset % subBucketCount + subBucketCount) << UInt64(shift)
        return lowest + (UInt64(1) << UInt64(shift)) / 2
    }
}
