import LyceumSupport
import Testing

@Suite struct DurationCountsTests {
    @Test func wholeCountsRoundTowardZero() {
        let duration = Duration.seconds(2) + .nanoseconds(1_999_999)
        #expect(duration.milliseconds == 2001)
        #expect(duration.microseconds == 2_001_999)
        #expect(duration.nanoseconds == 2_001_999_999)
        #expect((.zero - duration).milliseconds == -2001)
    }

    @Test func millisecondsRoundedUpNeverEndAWaitEarly() {
        #expect(Duration.nanoseconds(1).millisecondsRoundedUp == 1)
        #expect(Duration.milliseconds(5).millisecondsRoundedUp == 5)
        #expect((Duration.milliseconds(5) + .nanoseconds(1)).millisecondsRoundedUp == 6)
        #expect(Duration.zero.millisecondsRoundedUp == 0)
        #expect((.zero - Duration.microseconds(1500)).millisecondsRoundedUp == -1)
    }

    @Test func shortAndLongDurationsCountAlike() {
        // Below 2³² s the counts take a 64-bit path, above it a 128-bit one.
        let belowTheBoundary = Duration.seconds((1 << 32) - 1) + .nanoseconds(999_999_999)
        #expect(belowTheBoundary.nanoseconds == 4_294_967_295_999_999_999)
        #expect(belowTheBoundary.millisecondsRoundedUp == 4_294_967_296_000)
        #expect((belowTheBoundary + .nanoseconds(1)).nanoseconds == 4_294_967_296_000_000_000)
        #expect((belowTheBoundary + .nanoseconds(2)).millisecondsRoundedUp == 4_294_967_296_001)
        #expect((belowTheBoundary + .nanoseconds(2)).microseconds == 4_294_967_296_000_000)
    }

    @Test func countsSaturateInsteadOfTrapping() {
        let huge = Duration.seconds(Int64.max)
        #expect(huge.milliseconds == Int64.max)
        #expect(huge.millisecondsRoundedUp == Int64.max)
        #expect(huge.nanoseconds == Int64.max)
        #expect((.zero - huge).microseconds == Int64.min)
    }

    @Test func secondsAreFractional() {
        #expect(Duration.milliseconds(1500).seconds == 1.5)
        #expect((.zero - Duration.milliseconds(250)).seconds == -0.25)
    }
}
