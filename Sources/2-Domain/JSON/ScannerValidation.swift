/// The scanner's validate-only mode behind `JSONParser.validate(_:)`: the same checks in the same
/// order as `value(depth:)`, so the same input fails with the same error at the same offset, but
/// nothing is kept except object keys, which duplicate detection must compare as `String`s (Swift
/// compares them up to canonical equivalence, so raw bytes would not do).
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
        // Keys of the objects being checked, innermost last, in one reused array.
        let firstKey = openKeys.count
        defer { openKeys.removeSubrange(firstKey...) }
        var keys: Set<String> = []
        while true {
            skipWhitespace()
            let keyOffset = position
            guard try peek() == UInt8(ascii: "\"") else { throw JSONParseError(.unexpectedByte, at: position) }
            let key = try string()
            if openKeys.count - firstKey < 32 {
                for index in firstKey..<openKeys.count where openKeys[index] == key {
                    throw JSONParseError(.duplicateKey, at: keyOffset)
                }
            } else {
                if keys.isEmpty { keys = Set(openKeys[firstKey...]) }
                guard keys.insert(key).inserted else { throw JSONParseError(.duplicateKey, at: keyOffset) }
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

    /// Checks a string starting at its opening quote. Raw bytes are checked as UTF-8 run by run
    /// between escapes, which accepts exactly what checking the decoded whole accepts: an escape
    /// decodes to a complete scalar whose first byte is never a continuation byte. As in
    /// `string()`, bad UTF-8 is reported at the content's start, after any other error.
    mutating func skipString() throws(JSONParseError) {
        position += 1
        let start = position
        var runStart = start
        var validUTF8 = true
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                validUTF8 = validUTF8 && Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                guard validUTF8 else { throw JSONParseError(.invalidUTF8, at: start) }
                position += 1
                return
            case UInt8(ascii: "\\"):
                validUTF8 = validUTF8 && Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                scratch.removeAll(keepingCapacity: true)
                try escape()
                runStart = position
            case 0..<0x20:
                throw JSONParseError(.controlCharacterInString, at: position)
            default:
                position += 1
            }
        }
        throw JSONParseError(.unexpectedEnd, at: position)
    }

    /// Whether `bytes` is well-formed UTF-8 by the rules `String(validating:as:)` applies.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.contains(where: { $0 >= 0x80 }) else { return true }
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
