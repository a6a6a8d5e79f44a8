#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a compact JSON object whose members come in an order known in advance — the journal
/// payloads this program writes itself — without building a `JSONValue`. Any deviation from
/// the expected shape makes the read return `nil`, and the caller falls back to `JSONParser`.
public struct JSONRecordReader {
    var scanner: Scanner
    private var membersRead = 0

    @usableFromInline
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        scanner = Scanner(bytes: bytes, maxDepth: 8)
    }

    /// Runs `body` over `bytes`; `nil` when `body` or the final check finds another shape.
    // Inlinable so that it is specialized for each caller's `T`: replay reads every book through
    // it, and a generic `T` cost runtime metadata lookups worth 5% of a restart (issue 26).
    @inlinable
    public static func read<T>(_ bytes: [UInt8], _ body: (inout JSONRecordReader) -> T?) -> T? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONRecordReader(buffer)
            guard let value = body(&reader), reader.end() else { return nil }
            return value
        }
    }

    /// Consumes the next member's key if it is `key`, with its `{` or `,` and `:`.
    public mutating func member(_ key: StaticString) -> Bool {
        let opener = membersRead == 0 ? UInt8(ascii: "{") : UInt8(ascii: ",")
        let length = key.utf8CodeUnitCount
        let position = scanner.position
        let bytes = scanner.bytes
        guard position + length + 4 <= bytes.count, bytes[position] == opener, bytes[position + 1] == UInt8(ascii: "\""),
            bytes[position + 2 + length] == UInt8(ascii: "\""), bytes[position + 3 + length] == UInt8(ascii: ":")
        else { return false }
        // memcmp rather than a loop over `StaticString`'s bytes: replay matches eleven member
        // names per book (4% of a restart with 1M books, issue 26).
        guard memcmp(bytes.baseAddress! + position + 2, key.utf8Start, length) == 0 else { return false }
        scanner.position = position + length + 4
        membersRead += 1
        return true
    }

    /// The current member's value as a string, or `nil` when it is not one.
    public mutating func string() -> String? {
        guard scanner.position < scanner.bytes.count, scanner.bytes[scanner.position] == UInt8(ascii: "\"") else { return nil }
        do throws(JSONParseError) {
            return try scanner.string()
        } catch {
            return nil
        }
    }

    /// Appends the current member's value, when it is a string, to `output` unescaped, as
    /// validated UTF-8; returns the number of bytes appended, or `nil` (appending nothing) when
    /// the value is not a string. Saves the `String` a caller that only keeps bytes would discard.
    public mutating func string(appendingTo output: inout [UInt8]) -> Int? {
        guard scanner.position < scanner.bytes.count, scanner.bytes[scanner.position] == UInt8(ascii: "\"") else { return nil }
        do throws(JSONParseError) {
            return try scanner.stringContent { (content, start) throws(JSONParseError) in
                guard Scanner.isASCII(content) || String(validating: content, as: UTF8.self) != nil else {
                    throw JSONParseError(.invalidUTF8, at: start)
                }
                output.append(contentsOf: content)
                return content.count
            }
        } catch {
            return nil
        }
    }

    /// The current member's value as an integer, or `nil` when it is not one.
    public mutating func integer() -> Int? {
        if let number = plainInteger() { return number }
        guard scanner.position < scanner.bytes.count,
            scanner.bytes[scanner.position] == UInt8(ascii: "-") || (0x30...0x39).contains(scanner.bytes[scanner.position]),
            case .integer(let number)? = anyValue()
        else { return nil }
        return number
    }

    /// The current member's value when it is digits as this program writes them (no sign, no
    /// leading zero, at most 18 of them, then `,` or `}`), read in place; `nil` for anything
    /// else, which `integer()` leaves to the general parser. Replay reads five integers per
    /// book, and the parser's `JSONValue` for each cost about 3% of a restart (issue 26).
    private mutating func plainInteger() -> Int? {
        let bytes = scanner.bytes
        let start = scanner.position
        var position = start
        var value = 0
        while position < bytes.count, position - start < 18, bytes[position] &- UInt8(ascii: "0") < 10 {
            value = value &* 10 &+ Int(bytes[position] &- UInt8(ascii: "0"))
            position += 1
        }
        guard position > start, position < bytes.count, position - start == 1 || bytes[start] != UInt8(ascii: "0"),
            bytes[position] == UInt8(ascii: ",") || bytes[position] == UInt8(ascii: "}")
        else { return nil }
        scanner.position = position
        return value
    }

    /// The current member's value, whatever it is.
    public mutating func anyValue() -> JSONValue? {
        do throws(JSONParseError) {
            return try scanner.value(depth: 1)
        } catch {
            return nil
        }
    }

    @usableFromInline
    mutating func end() -> Bool {
        guard scanner.position + 1 == scanner.bytes.count, scanner.bytes[scanner.position] == UInt8(ascii: "}") else { return false }
        scanner.position += 1
        return true
    }
}
