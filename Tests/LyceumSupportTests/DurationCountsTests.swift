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
