/// A book id (a UUID) as 128 bits: the key of the library's tables. Hashing and rehashing two
/// words is far cheaper than hashing a 36-character heap string, which dominates replay.
struct BookID: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    /// Parses `8-4-4-4-12` hexadecimal digits in either case; `nil` for anything else.
    init?(_ text: String) {
        // Over the contiguous UTF-8, not `String.UTF8View`: iterating the view generically cost
        // about 50 instructions a byte, 4% of a book read (issue 19).
        var text = text
        guard let id = text.withUTF8({ BookID(utf8: $0) }) else { return nil }
        self = id
    }

    /// Parses the UTF-8 of `8-4-4-4-12` hexadecimal digits in either case; `nil` for anything else.
    init?(utf8: some Sequence<UInt8>) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        var index = 0
        for byte in utf8 {
            defer { index += 1 }
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(nibble) } else { low = low << 4 | UInt64(nibble) }
            digits += 1
        }
        guard index == 36, digits == 32 else { return nil }
        self.high = high
        self.low = low
    }

    /// The canonical spelling: `8-4-4-4-12` lowercase hexadecimal digits.
    var text: String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            let digits: StaticString = "0123456789abcdef"
            var index = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                let word = nibble < 16 ? high : low
                buffer[index] = digits.utf8Start[Int(word >> UInt64(60 - 4 * (nibble % 16)) & 0xF)]
                index += 1
            }
            return index
        }
    }
}

extension BookID {
    /// The id of exactly these 128 bits.
    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
}

extension Book {
    /// The text of the version-4 UUID made of `random`'s 128 bits, with the version and RFC 4122
    /// variant bits set: a new book's id, spelled as `BookID` spells ids.
    public static func version4ID(random: (high: UInt64, low: UInt64)) -> String {
        let versionMask: UInt64 = 0xF000, version: UInt64 = 0x4000
        let variantMask: UInt64 = 0b11 << 62, variant: UInt64 = 0b10 << 62
        return BookID(high: random.high & ~versionMask | version, low: random.low & ~variantMask | variant).text
    }
}
