import Foundation

/// Instants as events write them: RFC 3339, UTC, with milliseconds.
enum EventTime {
    private static let style = Date.ISO8601FormatStyle(timeZone: .gmt)

    /// `milliseconds` since 1970 as e.g. `2026-01-05T09:30:00.000Z`.
    static func rfc3339(_ milliseconds: Int64) -> String {
        // Whole seconds are exact in a Double; the milliseconds are appended as integers, since a
        // fractional Double would round some of them down by one.
        let (seconds, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, fraction) = millisecond < 0 ? (seconds - 1, millisecond + 1000) : (seconds, millisecond)
        let text = style.format(Date(timeIntervalSince1970: Double(wholeSeconds)))
        let digits = String(fraction)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// Now, in milliseconds since 1970.
    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
