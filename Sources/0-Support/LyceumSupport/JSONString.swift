/// How Lyceum writes a string as a JSON string literal — in replies, events, journal lines and
/// JSON log lines alike: `"` and `\` escaped with a backslash, a newline as `\n`, every other
/// control character (U+0000–U+001F) as `\u00XX` with lowercase hex, and every other character
/// as its own UTF-8. That is the spelling `protocol/journal.md` fixes for journal lines.
public enum JSONString {
    /// Appends `text` as a quoted, escaped JSON string literal to `output`.
    public static func append(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { append(utf8: $0, to: &output) }
    }

    /// Appends the text whose UTF-8 is `bytes` as ``append(_:to:)`` does: for texts kept as
    /// bytes (a stored book's), which are written without a `String` made first.
    public static func append(utf8 bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Runs that need no escaping are copied whole; most strings are one run.
        var runStart = 0
        var index = 0
        while index < bytes.count {
            // Eight bytes at a time while none needs escaping: a byte at a time cost 3.6k
            // instructions of a book create, whose strings are written twice (issue 26).
            if bytes.count - index >= 8 {
                let mask = escapeMask(UInt64(littleEndian: UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)))
                guard mask != 0 else {
                    index += 8
                    continue
                }
                index += mask.trailingZeroBitCount >> 3
            }
            let byte = bytes[index]
            index += 1
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            let escaped = index - 1
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<escaped]))
            runStart = index
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            default:
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0xF)])
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        output.append(UInt8(ascii: "\""))
    }

    /// The bytes of `word` (eight bytes loaded little-endian) that need escaping, as their
    /// high bits: a control character (below 0x20), `"` or `\`, the bytes a JSON parser must
    /// also stop at inside a string. Zero when there is none; otherwise its lowest set bit marks
    /// the first such byte exactly (`trailingZeroBitCount / 8` is its index), while bits above it
    /// may be spurious. (Each test is the classic "has a byte below n": a byte below n sets its
    /// high bit in `(x - n) & ~x`; borrows only ever mark bytes above a true match.)
    @inlinable @inline(__always)
    public static func escapeMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        return (control | (quote &- ones) & ~quote | (backslash &- ones) & ~backslash) & highs
    }

    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 2)
        append(text, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// How many bytes ``append(_:to:)`` adds for `text`, without writing them.
    public static func encodedLength(of text: String) -> Int {
        var length = 2
        for byte in text.utf8 {
            length += byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x0A ? 2 : byte < 0x20 ? 6 : 1
        }
        return length
    }

    /// Lowercase hexadecimal digits, as the escapes write them.
    public static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
