import JSON

/// Reads the journal's own lines back byte by byte: the fixed parts of the line format are
/// matched as literals, and what is JSON inside them (strings) is read by the `JSON` module.
///
/// Replay speed depends on this path, so it works on raw pointers and never builds JSON values.
struct LineCursor {
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

    /// Reads a JSON string literal and decodes its escapes, as the `JSON` module reads strings.
    mutating func readString() -> String? {
        guard let (text, after) = JSONParser.string(in: UnsafeBufferPointer(start: base, count: end), at: index) else { return nil }
        index = after
        return text
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
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
