import Foundation

/// Instants as events write them: RFC 3339, UTC, with milliseconds.
enum EventTime {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// `milliseconds` since 1970 as e.g. `2026-01-05T09:30:00.000Z`.
    static func rfc3339(_ milliseconds: Int64) -> String {
        style.format(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// Now, in milliseconds since 1970.
    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
