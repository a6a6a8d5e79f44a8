/// A value a peer chose (a service name, a routing id, a book id, an unknown field's name), made
/// safe to show in a log line or in the text of a reply: at most ``maxBytes`` bytes of it,
/// escaped, then `…` and the value's whole length when it was longer.
///
/// This is the one place that decides how a peer's value is shown, so that a log line and a
/// reply that quote the same value quote it the same way, and that neither grows with what a
/// peer sends: the result is at most `4 × maxBytes + 24` bytes whatever the input.
///
/// Escaping: printable ASCII and printable Unicode scalars stay as they are; a backslash becomes
/// `\\`; every other byte (controls, format characters such as bidirectional overrides,
/// unassigned or private-use scalars, invalid UTF-8) becomes `\xNN`, byte by byte.
public enum PeerText {
    /// How many bytes of a value are shown before it is cut.
    public static let maxBytes = 64

    /// `bytes` shown as described above: `books`, `\x00k\x8bEg`, `aaaa…(1048576 bytes)`.
    public static func excerpt(_ bytes: some Collection<UInt8>) -> String {
        // A scalar is at most 4 bytes: this much of the value decides what is shown.
        let head = Array(bytes.prefix(maxBytes + 3))
        var text = ""
        var offset = 0
        while offset < head.count {
            var decoder = UTF8()
            var iterator = head[offset...].makeIterator()
            guard case .scalarValue(let scalar) = decoder.decode(&iterator) else {
                // Not UTF-8 here: this one byte is escaped and decoding starts again after it.
                guard offset + 1 <= maxBytes else { break }
                text += hex(head[offset])
                offset += 1
                continue
            }
            let length = UTF8.width(scalar)
            // A scalar cut by the limit is left out rather than shown as broken bytes.
            guard offset + length <= maxBytes else { break }
            if scalar == "\\" {
                text += "\\\\"
            } else if isPrintable(scalar) {
                text.unicodeScalars.append(scalar)
            } else {
                for byte in head[offset..<offset + length] { text += hex(byte) }
            }
            offset += length
        }
        if offset < head.count { text += "…(\(bytes.count) bytes)" }
        return text
    }

    /// `text`'s UTF-8 shown as ``excerpt(_:)-(Collection<UInt8>)`` shows bytes.
    public static func excerpt(_ text: some StringProtocol) -> String { excerpt(text.utf8) }

    private static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.value >= 0x20 && scalar.value < 0x7F }
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: return false
        default: return true
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [UInt8(ascii: "\\"), UInt8(ascii: "x"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }
}
