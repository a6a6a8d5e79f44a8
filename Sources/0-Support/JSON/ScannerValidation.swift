/// A key of an object `Scanner.skipObject` is checking, located in the input rather than copied.
struct OpenKey {
    /// Offset of the key's opening quote.
    let quote: Int
    /// Offsets of the bytes between its quotes.
    let content: Range<Int>
    /// ASCII without escapes: its bytes are its text, and two such keys are equal `String`s
    /// exactly when their bytes are equal.
    let plain: Bool
}

/// The scanner's validate-only mode behind `JSONParser.validate(_:)`: the same checks in the same
/// order as `value(depth:)`, so the same input fails with the same error at the same offset, but
/// nothing is built. Duplicate keys are found by comparing bytes when both keys are plain ASCII,
/// and otherwise as decoded `String`s, as parsing does: Swift compares strings up to canonical
/// equivalence (`"K"` equals `"\u{212A}"`), which bytes alone would miss.
extension Scanner {
    /// Checks one value starting at `position` and moves past it.
    mutating func skipValue(depth: Int) throws(JSONParseError) {
        switch try peek() {
        case UInt8(ascii: "{"): try skipObject(depth: depth + 1)
        case UInt8(ascii: "["): try skipArray(depth: depth + 1)
        case UInt8(ascii: "\""): try skipString()
        // Literals and numbers build no tree (a number's range check needs its value anyway).
        default: _ = try value(depth: depth)
        }
    }

    mutating func skipObject(depth: Int) throws(JSONParseError) {
        guard depth <= maxDepth else { throw JSONParseError(.tooDeep, at: position) }
        position += 1
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return
        }
        let firstKey = openKeys.count
        defer { openKeys.removeSubrange(firstKey...) }
        // As in `object(depth:)`: past 32 keys, a set of their texts.
        var texts: Set<String> = []
        while true {
            skipWhitespace()
            let quote = position
            guard try peek() == UInt8(ascii: "\"") else { throw JSONParseError(.unexpectedByte, at: position) }
            let plain = try skipString()
            let key = OpenKey(quote: quote, content: quote + 1..<position - 1, plain: plain)
            if openKeys.count - firstKey < 32 {
                for index in firstKey..<openKeys.count where try isSameKey(openKeys[index], key) {
                    throw JSONParseError(.duplicateKey, at: quote)
                }
            } else {
                if texts.isEmpty {
                    for index in firstKey..<openKeys.count { texts.insert(try text(of: openKeys[index])) }
                }
                guard texts.insert(try text(of: key)).inserted else { throw JSONParseError(.duplicateKey, at: quote) }
            }
            openKeys.append(key)
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            try skipValue(depth: depth)
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return
            default: throw JSONParseError(.unexpectedByte, at: position)
            }
        }
    }

    /// Whether two keys are equal as the `String`s parsing would make of them.
    mutating func isSameKey(_ earlier: OpenKey, _ key: OpenKey) throws(JSONParseError) -> Bool {
        if earlier.plain && key.plain {
            return earlier.content.count == key.content.count
                && bytes[earlier.content].elementsEqual(bytes[key.content])
        }
        return try text(of: earlier) == text(of: key)
    }

    /// The decoded text of a key already checked.
    mutating func text(of key: OpenKey) throws(JSONParseError) -> String {
        let resume = position
        defer { position = resume }
        position = key.quote
        return try string()
    }

    mutating func skipArray(depth: Int) throws(JSONParseError) {
        guard depth <= maxDepth else { throw JSONParseError(.tooDeep, at: position) }
        position += 1
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            try skipValue(depth: depth)
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return
            default: throw JSONParseError(.unexpectedByte, at: position)
            }
        }
    }

    /// Checks a string starting at its opening quote, as `string()` reads it. Raw bytes are
    /// checked as UTF-8 run by run between escapes, which accepts exactly what checking the
    /// decoded whole accepts: an escape decodes to a complete scalar whose first byte is never a
    /// continuation byte. As in `string()`, bad UTF-8 is reported at the content's start, after
    /// any other error.
    /// - Returns: whether the string is plain: ASCII without escapes.
    @discardableResult
    mutating func skipString() throws(JSONParseError) -> Bool {
        position += 1
        let start = position
        var runStart = start
        var validUTF8 = true
        var ascii = true
        var escaped = false
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                if !ascii { validUTF8 = validUTF8 && Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[runStart..<position])) }
                guard validUTF8 else { throw JSONParseError(.invalidUTF8, at: start) }
                position += 1
                return !escaped && ascii
            case UInt8(ascii: "\\"):
                if !ascii { validUTF8 = validUTF8 && Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[runStart..<position])) }
                escaped = true
                scratch.removeAll(keepingCapacity: true)
                try escape()
                runStart = position
            case 0..<0x20:
                throw JSONParseError(.controlCharacterInString, at: position)
            default:
                if byte >= 0x80 { ascii = false }
                position += 1
            }
        }
        throw JSONParseError(.unexpectedEnd, at: position)
    }

    /// Whether `bytes` is well-formed UTF-8 by the rules `String(validating:as:)` applies.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
