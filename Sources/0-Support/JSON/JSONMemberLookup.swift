/// What a look-up of one top-level member of a JSON object found.
public enum JSONMemberLookup: Sendable, Equatable {
    /// The member is there and is a string, with this decoded text.
    case string(String)
    /// The member is there but is not a string.
    case notString
    /// The object has no such member.
    case absent
    /// The input is not a JSON object as ``JSONParser/parse(_:)-([UInt8])`` reads one up to the
    /// member (or, when absent, to the object's end).
    case malformed
}

extension JSONParser {
    /// Reads the top-level member `key` of the object in `buffer` without building the object,
    /// for a reader that needs one member of a message it does not own (the broker's partition
    /// router reads `learner`). Strings are decoded with the parser's rules (escapes, valid
    /// UTF-8), so `"\u0061da"` is `ada`; the rest is only skipped, as far as needed, within the
    /// parser's size and depth limits. Duplicate keys are not looked for: the first `key` wins,
    /// and whoever parses the whole message rejects the duplicate.
    public func member(_ key: String, in buffer: UnsafeRawBufferPointer) -> JSONMemberLookup {
        guard buffer.count <= maxBytes else { return .malformed }
        var scanner = Scanner(bytes: buffer.bindMemory(to: UInt8.self), maxDepth: maxDepth)
        do throws(JSONParseError) {
            scanner.skipWhitespace()
            try scanner.expect(UInt8(ascii: "{"))
            scanner.skipWhitespace()
            if try scanner.peek() == UInt8(ascii: "}") { return .absent }
            while true {
                scanner.skipWhitespace()
                guard try scanner.peek() == UInt8(ascii: "\"") else { return .malformed }
                let name = try scanner.string()
                scanner.skipWhitespace()
                try scanner.expect(UInt8(ascii: ":"))
                scanner.skipWhitespace()
                if name == key {
                    guard try scanner.peek() == UInt8(ascii: "\"") else { return .notString }
                    return .string(try scanner.string())
                }
                try scanner.skipValue(depth: 1)
                scanner.skipWhitespace()
                switch try scanner.peek() {
                case UInt8(ascii: ","): scanner.position += 1
                case UInt8(ascii: "}"): return .absent
                default: return .malformed
                }
            }
        } catch {
            return .malformed
        }
    }

    /// ``member(_:in:)`` over the bytes of an array.
    public func member(_ key: String, in bytes: [UInt8]) -> JSONMemberLookup {
        bytes.withUnsafeBytes { member(key, in: $0) }
    }
}
