import Foundation
import LyceumSupport
import Testing

@Suite struct RFC3339Tests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (1_767_605_400_123, "2026-01-05T09:30:00.123Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        // Years outside 0…9999 take the path of as many digits as they need.
        (253_402_300_800_000, "10000-01-01T00:00:00.000Z"),
        (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
        (-62_167_219_200_001, "-0001-12-31T23:59:59.999Z"),
    ])
    func formatsKnownInstants(milliseconds: Int64, text: String) {
        #expect(RFC3339.string(millisecondsSince1970: milliseconds) == text)
    }

    /// Foundation's own RFC 3339 parser reads back every instant exactly, over a spread of
    /// dates before and after 1970 and across leap years and century boundaries (from 1600:
    /// Foundation switches to the Julian calendar before 1582).
    @Test func roundTripsThroughAnIndependentParser() throws {
        let parser = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
        var generator = SystemRandomNumberGenerator()
        var instants: [Int64] = [0, -86_400_000, 4_107_542_399_999, -2_208_988_800_000]
        for _ in 0..<2000 { instants.append(Int64.random(in: -11_676_096_000_000...253_402_300_799_999, using: &generator)) }
        for milliseconds in instants {
            let text = RFC3339.string(millisecondsSince1970: milliseconds)
            let date = try parser.parse(text)
            let parsed = Int64((date.timeIntervalSince1970 * 1000).rounded())
            #expect(parsed == milliseconds, "\(milliseconds) was written as \(text)")
        }
    }

    @Test func nowIsTheSystemClock() throws {
        let before = Int64(Date().timeIntervalSince1970 * 1000) - 1
        let now = RFC3339.currentMillisecondsSince1970()
        let after = Int64(Date().timeIntervalSince1970 * 1000) + 1
        #expect(before <= now && now <= after)
        #expect(RFC3339.now().utf8.count == 24)
    }
}
