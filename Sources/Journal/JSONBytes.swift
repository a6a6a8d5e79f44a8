/// The little JSON the journal needs: escaping strings, and reading its own lines back byte by byte.
///
/// Replay speed depends on this path, so it works on raw pointers and never builds JSON values.
struct JSONCursor {
    let base: UnsafePointer<UInt8>
    let end: Int
    var index: Int

    init(_ bytes: UnsafeRawBufferPointer, from index: Int = 0) {
        base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        end = bytes.count
        self.index = index
    }

    var isAtEnd: Bool { index >= end }

    /// Consumes `literal` if the bytes at the cursor are exactly it.
    mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - index >= count, memcmp(base + index, literal.utf8Start, count) == 0 else { return false }
        index += count
        return true
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard index < end, base[index] == byte else { return false }
        index += 1
        return true
    }

    /// Reads a non-negative decimal integer without leading zeros (as the journal writes them).
    mutating func readUnsigned() -> UInt64? {
        let start = index
        var value: UInt64 = 0
        while index < end, base[index] &- 0x30 < 10 {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(UInt64(base[index] &- 0x30))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || base[start] != 0x30 else { return nil }
        return value
    }

    /// Reads a JSON string and decodes its escapes.
    mutating func readString() -> String? {
        guard consume(0x22) else { return nil }
        let start = index
        while index < end {
            let byte = base[index]
            if byte == 0x22 {
                let text = String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
                index += 1
                return text
            }
            if byte == 0x5C { index = start - 1; return readEscapedString() }
            if byte < 0x20 { return nil }
            index += 1
        }
        return nil
    }

    private mutating func readEscapedString() -> String? {
        guard consume(0x22) else { return nil }
        var bytes: [UInt8] = []
        while index < end {
            let byte = base[index]
            index += 1
            switch byte {
            case 0x22:
                return String(validating: bytes, as: UTF8.self)
            case 0x5C:
                guard index < end else { return nil }
                let escape = base[index]
                index += 1
                switch escape {
                case 0x22, 0x5C, 0x2F: bytes.append(escape)
                case 0x62: bytes.append(0x08)
                case 0x66: bytes.append(0x0C)
                case 0x6E: bytes.append(0x0A)
                case 0x72: bytes.append(0x0D)
                case 0x74: bytes.append(0x09)
                case 0x75:
                    guard var scalar = readHex4() else { return nil }
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard consume("\\u"), let low = readHex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    bytes.append(contentsOf: String(Character(unicode)).utf8)
                default: return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                bytes.append(byte)
            }
        }
        return nil
    }

    private mutating func readHex4() -> UInt32? {
        guard end - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = JSONCursor.hexValue(base[index]) else { return nil }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }

    /// Skips one complete, well-formed JSON value; false if the bytes are not one.
    /// Raw newlines are refused even as whitespace, since a journal line must stay one line.
    mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 256 else { return false }
        skipWhitespace()
        guard index < end else { return false }
        switch base[index] {
        case 0x7B:  // {
            index += 1
            skipWhitespace()
            if consume(0x7D) { return true }
            while true {
                skipWhitespace()
                guard index < end, base[index] == 0x22, skipString() else { return false }
                skipWhitespace()
                guard consume(0x3A), skipValue(depth: depth + 1) else { return false }
                skipWhitespace()
                if consume(0x2C) { continue }
                return consume(0x7D)
            }
        case 0x5B:  // [
            index += 1
            skipWhitespace()
            if consume(0x5D) { return true }
            while true {
                guard skipValue(depth: depth + 1) else { return false }
                skipWhitespace()
                if consume(0x2C) { continue }
                return consume(0x5D)
            }
        case 0x22: return skipString()
        case 0x74: return consume("true")
        case 0x66: return consume("false")
        case 0x6E: return consume("null")
        default: return skipNumber()
        }
    }

    /// Skips one object or array by its brackets and strings alone, without checking the grammar
    /// in between; false if the bytes end first. For lines whose checksum already vouches that the
    /// journal wrote them from a validated value, where the full check would only cost time.
    mutating func skipContainer() -> Bool {
        var depth = 0
        while index < end {
            switch base[index] {
            case 0x22:
                index += 1
                while true {
                    guard index < end, let quote = memchr(base + index, 0x22, end - index) else { return false }
                    let position = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(quote))
                    var backslashes = 0
                    while position - backslashes - 1 >= index, base[position - backslashes - 1] == 0x5C { backslashes += 1 }
                    index = position + 1
                    if backslashes % 2 == 0 { break }
                }
                continue
            case 0x7B, 0x5B:
                depth += 1
            case 0x7D, 0x5D:
                depth -= 1
                if depth == 0 {
                    index += 1
                    return true
                }
            default:
                break
            }
            index += 1
        }
        return false
    }

    private mutating func skipWhitespace() {
        while index < end, base[index] == 0x20 || base[index] == 0x09 || base[index] == 0x0D { index += 1 }
    }

    private mutating func skipString() -> Bool {
        index += 1
        while index < end {
            let byte = base[index]
            index += 1
            if byte == 0x22 { return true }
            if byte < 0x20 { return false }
            if byte == 0x5C {
                guard index < end else { return false }
                let escape = base[index]
                index += 1
                switch escape {
                case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74: continue
                case 0x75:
                    guard readHex4() != nil else { return false }
                default: return false
                }
            }
        }
        return false
    }

    private mutating func skipNumber() -> Bool {
        _ = consume(0x2D)
        guard skipDigits(allowLeadingZero: false) else { return false }
        if consume(0x2E) { guard skipDigits(allowLeadingZero: true) else { return false } }
        if consume(0x65) || consume(0x45) {
            if !consume(0x2B) { _ = consume(0x2D) }
            guard skipDigits(allowLeadingZero: true) else { return false }
        }
        return true
    }

    private mutating func skipDigits(allowLeadingZero: Bool) -> Bool {
        let start = index
        while index < end, base[index] &- 0x30 < 10 { index += 1 }
        guard index > start else { return false }
        return allowLeadingZero || index - start == 1 || base[start] != 0x30
    }
}

enum JSONWriter {
    /// Appends `text` as a JSON string literal, escaping quotes, backslashes and control characters.
    static func appendString(_ text: String, to output: inout [UInt8]) {
        output.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: output.append(0x5C); output.append(0x22)
            case 0x5C: output.append(0x5C); output.append(0x5C)
            case 0x0A: output.append(0x5C); output.append(0x6E)
            case ..<0x20:
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(0x22)
    }

    /// The length `appendString` would add for `text`.
    static func encodedLength(of text: String) -> Int {
        var length = 2
        for byte in text.utf8 {
            length += byte == 0x22 || byte == 0x5C || byte == 0x0A ? 2 : byte < 0x20 ? 6 : 1
        }
        return length
    }

    static func appendDecimal(_ value: UInt64, to output: inout [UInt8]) {
        if value < 10 { output.append(0x30 + UInt8(value)); return }
        var digits: [UInt8] = []
        var rest = value
        while rest > 0 { digits.append(0x30 + UInt8(rest % 10)); rest /= 10 }
        output.append(contentsOf: digits.reversed())
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
