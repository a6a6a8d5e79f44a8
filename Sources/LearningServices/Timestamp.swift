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
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):"
            + "\(pad(seconds % 60, 2)).\(pad(dayMilliseconds % 1000, 3))Z"
    }
}
