import LyceumSupport
import Foundation
import LoadTest
import Testing

@Suite struct LatencyHistogramTests {
    /// The exact percentile of sorted values, by the same nearest-rank definition.
    private func exact(_ sorted: [UInt64], _ percentile: Double) -> UInt64 {
        let rank = max(1, Int((percentile / 100 * Double(sorted.count)).rounded(.up)))
        return sorted[rank - 1]
    }

    private func expectWithinOnePercent(_ histogram: LatencyHistogram, _ sorted: [UInt64], sourceLocation: SourceLocation = #_sourceLocation) {
        for percentile in [1.0, 10, 50, 75, 90, 99, 99.9, 99.99] {
            let wanted = Double(exact(sorted, percentile))
            let got = Double(histogram.value(atPercentile: percentile))
            #expect(abs(got - wanted) <= max(1, wanted * 0.01), "p\(percentile): \(got) vs exact \(wanted)", sourceLocation: sourceLocation)
        }
        #expect(histogram.value(atPercentile: 100) == sorted.last!, sourceLocation: sourceLocation)
        #expect(histogram.minimum == sorted.first!, sourceLocation: sourceLocation)
        #expect(histogram.maximum == sorted.last!, sourceLocation: sourceLocation)
    }

    @Test func uniformDistribution() {
        var histogram = LatencyHistogram()
        for value in 1...100_000 as ClosedRange<UInt64> { histogram.record(microseconds: value) }
        #expect(histogram.count == 100_000)
        expectWithinOnePercent(histogram, Array(1...100_000))
        #expect(abs(histogram.mean - 50_000.5) < 1)
    }

    @Test func exponentialDistributionFromMicrosecondsToMinutes() {
        var generator = SeededGenerator(seed: 42)
        var histogram = LatencyHistogram()
        var values: [UInt64] = []
        for _ in 0..<200_000 {
            // Mean 1 ms, a long tail; one in a thousand is a stall of up to two minutes.
            let uniform = Double.random(in: Double.ulpOfOne..<1, using: &generator)
            var value = UInt64(-1000 * log(uniform))
            if Int.random(in: 0..<1000, using: &generator) == 0 { value = UInt64.random(in: 1_000_000...120_000_000, using: &generator) }
            values.append(value)
            histogram.record(microseconds: value)
        }
        expectWithinOnePercent(histogram, values.sorted())
    }

    @Test func mergingEqualsRecordingInOne() {
        var whole = LatencyHistogram(), first = LatencyHistogram(), second = LatencyHistogram()
        var generator = SeededGenerator(seed: 7)
        for index in 0..<10_000 {
            let value = UInt64.random(in: 0...5_000_000, using: &generator)
            whole.record(microseconds: value)
            if index.isMultiple(of: 3) { first.record(microseconds: value) } else { second.record(microseconds: value) }
        }
        first.merge(second)
        first.merge(LatencyHistogram())
        #expect(first.count == whole.count)
        #expect(first.buckets.elementsEqual(whole.buckets) { $0.value == $1.value && $0.count == $1.count })
        #expect(first.minimum == whole.minimum && first.maximum == whole.maximum)
    }

    @Test func extremesAndDurations() {
        var histogram = LatencyHistogram()
        #expect(histogram.value(atPercentile: 99) == 0)
        histogram.record(.nanoseconds(1_999))
        histogram.record(.seconds(7200))
        histogram.record(.seconds(-1))
        #expect(histogram.minimum == 0)
        #expect(histogram.value(atPercentile: 50) == 1)
        #expect(histogram.maximum == LatencyHistogram.highestTrackable)
    }
}
