#if canImport(Glibc)
import Glibc
#endif

/// Instants as Lyceum writes them everywhere (replies, events, logs): RFC 3339, UTC, always
/// with milliseconds, e.g. `2026-01-05T09:30:00.000Z`.
public enum RFC3339 {
    /// `milliseconds` since 1970-01-01T00:00:00Z as RFC 3339 text; years outside 0…9999 are
    /// written with as many digits as they need (RFC 3339 itself stops at 9999).
    public static func string(millisecondsSince1970 milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        write(millisecondsSince1970: milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string(millisecondsSince1970:)`'s text (ASCII only, so it needs no escaping in
    /// JSON) to `bytes`, allocating nothing more: every book in a reply carries two instants.
    public static func write(millisecondsSince1970 milliseconds: Int64, to bytes: inout [UInt8]) {
        withText(millisecondsSince1970: milliseconds) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with `string(millisecondsSince1970:)`'s UTF-8, spelled on the stack for years
    /// 0…9999: for a writer that appends the same instant twice (a new book's created and
    /// updated times), which then formats it once.
    public static func withText(millisecondsSince1970 milliseconds: Int64, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let (days, millisecondOfDay) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civilDate(daysSince1970: days)
        let seconds = millisecondOfDay / 1000
        guard (0...9999).contains(year) else {
            var text: [UInt8] = []
            writeAnyYear(year, month, day, seconds: seconds, millisecond: millisecondOfDay % 1000, to: &text)
            return text.withUnsafeBufferPointer(body)
        }
        // Every field has a fixed width: filled in place and appended in one copy, where a byte
        // at a time cost 1.5k instructions a date (two per book in every reply, issue 26).
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { raw in
            let text = raw.bindMemory(to: UInt8.self)
            func put(_ value: Int64, at index: Int) {
                text[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10)
                text[index + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
            }
            put(year / 100, at: 0)
            put(year % 100, at: 2)
            text[4] = UInt8(ascii: "-")
            put(month, at: 5)
            text[7] = UInt8(ascii: "-")
            put(day, at: 8)
            text[10] = UInt8(ascii: "T")
            put(seconds / 3600, at: 11)
            text[13] = UInt8(ascii: ":")
            put(seconds / 60 % 60, at: 14)
            text[16] = UInt8(ascii: ":")
            put(seconds % 60, at: 17)
            text[19] = UInt8(ascii: ".")
            let millisecond = millisecondOfDay % 1000
            text[20] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millisecond / 100)
            put(millisecond % 100, at: 21)
            text[23] = UInt8(ascii: "Z")
            body(UnsafeBufferPointer(text))
        }
    }

    /// `write(millisecondsSince1970:to:)` for a year outside 0…9999, written with a sign and
    /// as many digits as it needs.
    private static func writeAnyYear(
        _ year: Int64, _ month: Int64, _ day: Int64, seconds: Int64, millisecond: Int64, to bytes: inout [UInt8]
    ) {
        if year < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(year.magnitude, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(UInt64(month), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(UInt64(day), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(UInt64(seconds / 3600), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(UInt64(seconds / 60 % 60), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(UInt64(seconds % 60), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(UInt64(millisecond), width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The current time as RFC 3339 text.
    public static func now() -> String { string(millisecondsSince1970: currentMillisecondsSince1970()) }

    /// The system's real-time clock in whole milliseconds since 1970 (rounded down).
    public static func currentMillisecondsSince1970() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Quotient and remainder with the remainder never negative, so that instants before 1970
    /// fall on the right day.
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// Howard Hinnant's days-to-civil conversion (proleptic Gregorian calendar): integer
    /// arithmetic only, so it costs far less than a calendar and needs no lock or cache.
    private static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Appends `value` in decimal, left-padded with zeros to at least `width` digits, most
    /// significant digit first (no scratch array).
    private static func appendDigits(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        var scale: UInt64 = 1
        var count = 1
        while value / scale >= 10 {
            scale *= 10
            count += 1
        }
        for _ in count..<max(width, count) { bytes.append(UInt8(ascii: "0")) }
        var rest = value
        while scale > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / scale))
            rest %= scale
            scale /= 10
        }
    }
}
