/// The opaque `cursor` strings of paged lists: a small JSON array written as lowercase hex, so
/// that clients pass it back as a token and cannot mistake it for something to edit.
public enum PageCursor {
    /// The cursor holding `parts`.
    public static func encode(_ parts: [JSONValue]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        for byte in JSONValue.array(parts).serialized() {
            output.append(hex[Int(byte >> 4)])
            output.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The parts of a cursor written by `encode`, or `nil` when `cursor` is not lowercase hex of
    /// a JSON array (at most `maxBytes` once decoded).
    public static func decode(_ cursor: String, maxBytes: Int = 8 * 1024) -> [JSONValue]? {
        guard cursor.utf8.count.isMultiple(of: 2), cursor.utf8.count / 2 <= maxBytes else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(cursor.utf8.count / 2)
        var high: UInt8?
        for character in cursor.utf8 {
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        guard case .success(.array(let parts)) = Result(catching: { () throws(JSONParseError) in try JSONParser(maxBytes: maxBytes).parse(bytes) })
        else { return nil }
        return parts
    }
}
