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
    init?(utf8: UnsafeBufferPointer<UInt8>) {
        // Group by group at fixed offsets, not byte by byte with a test for each dash: a byte at
        // a time cost about 25 instructions a byte, once per read and twice per write (issue 26).
        let dash = UInt8(ascii: "-")
        guard utf8.count == 36, utf8[8] == dash, utf8[13] == dash, utf8[18] == dash, utf8[23] == dash,
            let (high, low) = Self.nibbles.withUnsafeBufferPointer({ nibbles -> (UInt64, UInt64)? in
                guard let first = Self.hexadecimal(utf8, 0, 8, nibbles), let second = Self.hexadecimal(utf8, 9, 4, nibbles),
                    let third = Self.hexadecimal(utf8, 14, 4, nibbles), let fourth = Self.hexadecimal(utf8, 19, 4, nibbles),
                    let last = Self.hexadecimal(utf8, 24, 12, nibbles)
                else { return nil }
                return (first << 32 | second << 16 | third, fourth << 48 | last)
            })
        else { return nil }
        self.high = high
        self.low = low
    }

    /// Each byte's value as a hexadecimal digit in either case, or 0xFF for a byte that is none.
    private static let nibbles: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(byte) - UInt8(ascii: "A") + 10
        default: 0xFF
        }
    }

    /// The value of the `count` hexadecimal digits (either case) at `start`; `nil` if any is not one.
    private static func hexadecimal(
        _ utf8: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int, _ nibbles: UnsafeBufferPointer<UInt8>
    ) -> UInt64? {
        // A table lookup and no branch per digit: a byte that is none sets the high bits of
        // `all`, tested once. Replay parses every book's id (two tests a digit were 4.5% of a
        // restart with 1M books, issue 26).
        var value: UInt64 = 0
        var all: UInt8 = 0
        for byte in UnsafeBufferPointer(rebasing: utf8[start..<(start + count)]) {
            let nibble = nibbles[Int(byte)]
            all |= nibble
            value = value << 4 | UInt64(nibble & 0x0F)
        }
        return all & 0xF0 == 0 ? value : nil
    }

    /// The canonical spelling: `8-4-4-4-12` lowercase hexadecimal digits.
    var text: String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            write(to: UnsafeMutableBufferPointer(rebasing: buffer[..<36]))
            return 36
        }
    }

    /// Calls `body` with the UTF-8 of `text`, spelled on the stack: a stored book's reply
    /// writes its id without a `String` made first.
    func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &text) { raw in
            let buffer = UnsafeMutableBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[..<36])
            write(to: buffer)
            return body(UnsafeBufferPointer(buffer))
        }
    }

    /// Writes `text`'s 36 bytes into `buffer`, which holds exactly that many.
    private func write(to buffer: UnsafeMutableBufferPointer<UInt8>) {
        // Group by group, each from its last digit back, with the dashes at fixed offsets: a
        // test for a dash before each digit cost about 20 instructions a byte (issue 26).
        Self.writeHexadecimal(high >> 32, to: buffer, 0, 8)
        Self.writeHexadecimal(high >> 16, to: buffer, 9, 4)
        Self.writeHexadecimal(high, to: buffer, 14, 4)
        Self.writeHexadecimal(low >> 48, to: buffer, 19, 4)
        Self.writeHexadecimal(low, to: buffer, 24, 12)
        let dash = UInt8(ascii: "-")
        buffer[8] = dash
        buffer[13] = dash
        buffer[18] = dash
        buffer[23] = dash
    }

    /// Writes the low `count` hexadecimal digits of `value` (lowercase) at `start`.
    private static func writeHexadecimal(_ value: UInt64, to buffer: UnsafeMutableBufferPointer<UInt8>, _ start: Int, _ count: Int) {
        let digits: StaticString = "0123456789abcdef"
        var rest = value
        for index in (start..<(start + count)).reversed() {
            buffer[index] = digits.utf8Start[Int(rest & 0xF)]
            rest >>= 4
        }
    }
}

extension BookID {
    /// Below zero, zero or above zero as this id comes before, equals or follows `other` in the
    /// order of their lowercase texts (the order of their bits): how lists break ties.
    func compare(to other: BookID) -> Int {
        (high, low) < (other.high, other.low) ? -1 : (high, low) == (other.high, other.low) ? 0 : 1
    }

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
