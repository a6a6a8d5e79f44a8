import Foundation

/// Ids of courses, lessons and questions: 1–64 of letters, digits, `.`, `_`, `-`, starting with
/// a letter or digit. Sources without ids get one derived from the title, so ids stay the same
/// across reloads as long as titles do.
enum StableID {
    static func isValid(_ id: String) -> Bool {
        guard let first = id.utf8.first, id.utf8.count <= 64, isAlphanumeric(first) else { return false }
        return id.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// "Ünïcode & Swift: Part 2" → "unicode-swift-part-2".
    static func slug(_ text: String) -> String {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var slug = ""
        for scalar in folded.unicodeScalars {
            if scalar.isASCII, isAlphanumeric(UInt8(scalar.value)) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty, slug.last != "-" {
                slug.append("-")
            }
            if slug.utf8.count >= 56 { break }
        }
        while slug.last == "-" { slug.removeLast() }
        return slug.isEmpty ? "item" : slug
    }

    /// `base`, or `base-2`, `base-3`, … when taken; records the result as taken.
    static func unique(_ base: String, taken: inout Set<String>) -> String {
        var candidate = base
        var suffix = 2
        while !taken.insert(candidate).inserted {
            candidate = "\(base)-\(suffix)"
            suffix += 1
        }
        return candidate
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
