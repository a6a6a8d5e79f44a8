/// Formats instants as the contract writes them: RFC 3339 UTC with milliseconds.
enum Timestamp {
    /// `milliseconds` since 1970 as e.g. `2026-01-05T09:30:00.000Z`.
    static func rfc3339(_ milliseconds: Int64) -> String {
        let (days, millisecondOfDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (dayShift, dayMilliseconds) = millisecondOfDay < 0 ? (-1, millisecondOfDay + 86_400_000) : (0, millisecondOfDay)
        // Howard Hinnant's days-to-civil conversion.
        let z = days + Int64(dayShift) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let seconds = dayMilliseconds / 1000
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func append(_ value: Int64, width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        append(year, width: 4)
        bytes.append(UInt8(ascii: "-"))
        append(month, width: 2)
        bytes.append(UInt8(ascii: "-"))
        append(day, width: 2)
        bytes.append(UInt8(ascii: "T"))
        append(seconds / 3600, width: 2)
        bytes.append(UInt8(ascii: ":"))
        append(seconds / 60 % 60, width: 2)
        bytes.append(UInt8(ascii: ":"))
        append(seconds % 60, width: 2)
        bytes.append(UInt8(ascii: "."))
        append(dayMilliseconds % 1000, width: 3)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
