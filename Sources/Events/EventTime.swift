import Foundation
import Synchronization

/// Instants as events write them: RFC 3339, UTC, with milliseconds.
enum EventTime {
    private static let style = Date.ISO8601FormatStyle(timeZone: .gmt)
    /// The last whole second formatted, without its `Z`: events come many to a second, and
    /// Foundation's formatter costs more than everything else in a publish.
    private static let lastSecond = Mutex<(seconds: Int64, text: Substring)>((Int64.min, ""))

    /// `milliseconds` since 1970 as e.g. `2026-01-05T09:30:00.000Z`.
    static func rfc3339(_ milliseconds: Int64) -> String {
        // Whole seconds are exact in a Double; the milliseconds are appended as integers, since a
        // fractional Double would round some of them down by one.
        let (seconds, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, fraction) = millisecond < 0 ? (seconds - 1, millisecond + 1000) : (seconds, millisecond)
        let cached = lastSecond.withLock { $0.seconds == wholeSeconds ? $0.text : nil }
        let text = cached ?? style.format(Date(timeIntervalSince1970: Double(wholeSeconds))).dropLast()
        if cached == nil { lastSecond.withLock { $0 = (wholeSeconds, text) } }
        let digits = String(fraction)
        return text + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// Now, in milliseconds since 1970.
    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
