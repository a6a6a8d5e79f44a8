import Foundation
import Synchronization

/// Instants as events write them: RFC 3339, UTC, with milliseconds.
enum EventTime {
    private static let style = Date.ISO8601FormatStyle(timeZone: .gmt)
    /// The last whole second formatted, without its `Z`: events come many to a second, and
    /// Foundation's formatter costs more than everything else in an event.
    private static let lastSecond = Mutex<(seconds: Int64, text: [UInt8])>((Int64.min, []))

    /// `milliseconds` since 1970 as e.g. `2026-01-05T09:30:00.000Z`.
    static func rfc3339(_ milliseconds: Int64) -> String {
        // Whole seconds are exact in a Double; the milliseconds are appended as integers, since a
        // fractional Double would round some of them down by one.
        let (seconds, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, fraction) = millisecond < 0 ? (seconds - 1, millisecond + 1000) : (seconds, millisecond)
        let text = lastSecond.withLock { cached in
            if cached.seconds != wholeSeconds {
                cached = (wholeSeconds, Array(style.format(Date(timeIntervalSince1970: Double(wholeSeconds))).utf8.dropLast()))
            }
            return cached.text
        }
        return String(unsafeUninitializedCapacity: text.count + 5) { buffer in
            let end = buffer.initialize(fromContentsOf: text)
            buffer[end] = UInt8(ascii: ".")
            buffer[end + 1] = UInt8(fraction / 100) + UInt8(ascii: "0")
            buffer[end + 2] = UInt8(fraction / 10 % 10) + UInt8(ascii: "0")
            buffer[end + 3] = UInt8(fraction % 10) + UInt8(ascii: "0")
            buffer[end + 4] = UInt8(ascii: "Z")
            return end + 5
        }
    }

    /// Now, in milliseconds since 1970.
    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
