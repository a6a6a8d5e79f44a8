/// Reads the duration texts found in app catalogs: "12:30", "1:02:03", "15 min", "3 Hours",
/// "1h 20m", "45 sec". A bare number counts as minutes, as the apps display it.
public enum DurationText {
    /// Seconds described by `text`, or `nil` when it is not a duration.
    public static func seconds(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: \.isWhitespace)
        if trimmed.contains(":") {
            let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count) else { return nil }
            var total = 0
            for part in parts {
                guard let value = Int(part), value >= 0 else { return nil }
                total = total * 60 + value
            }
            return total
        }
        var total = 0
        var number: Double?
        var matched = false
        var scanner = Substring(trimmed.lowercased())
        while let first = scanner.first {
            if first.isWhitespace || first == "," {
                scanner = scanner.dropFirst()
            } else if first.isNumber {
                let digits = scanner.prefix { $0.isNumber || $0 == "." }
                guard number == nil, let value = Double(digits) else { return nil }
                number = value
                scanner = scanner.dropFirst(digits.count)
            } else {
                let word = scanner.prefix { $0.isLetter }
                guard let value = number, !word.isEmpty, let unit = unitSeconds(String(word)) else { return nil }
                total += Int((value * Double(unit)).rounded())
                number = nil
                matched = true
                scanner = scanner.dropFirst(word.count)
            }
        }
        if let value = number { return matched ? nil : Int((value * 60).rounded()) }
        return matched ? total : nil
    }

    private static func unitSeconds(_ word: String) -> Int? {
        switch word {
        case "h", "hr", "hrs", "hour", "hours": 3600
        case "m", "min", "mins", "minute", "minutes": 60
        case "s", "sec", "secs", "second", "seconds": 1
        default: nil
        }
    }
}

extension String {
    func trimmingCharacters(in isTrimmed: (Character) -> Bool) -> String {
        String(drop(while: isTrimmed).reversed().drop(while: isTrimmed).reversed())
    }
}
