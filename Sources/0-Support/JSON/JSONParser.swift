import LyceumSupport

/// A strict RFC 8259 parser: one value, no comments, no trailing commas, valid UTF-8 only,
/// no duplicate keys, finite numbers, bounded nesting and size.
public struct JSONParser: Sendable {
    /// Largest input accepted, in bytes.
    public var maxBytes: Int
    /// Deepest nesting of arrays and objects accepted.
    public var maxDepth: Int

    /// A parser with these limits; the defaults suit files, requests use tighter ones.
    public init(maxBytes: Int = 16 << 20, maxDepth: Int = 64) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }

    /// Parses `bytes` as exactly one JSON value with optional surrounding whitespace.
    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBytes { parseResult($0) }
        return try result.get()
    }

    /// Parses the bytes of `buffer` as exactly one JSON value.
    public func parse(_ buffer: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        try parseResult(buffer).get()
    }

    /// Parses the UTF-8 of `text`.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Reads the JSON string literal whose opening quote is at `offset` in `bytes`, with the
    /// same rules as ``parse(_:)-([UInt8])`` (escapes decoded, valid UTF-8, no raw control
    /// characters), for formats that embed strings in bytes of their own (the journal's lines).
    /// - Returns: the text and the offset just past the closing quote; `nil` if no valid string
    ///   literal starts there.
    public static func string(in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> (text: String, end: Int)? {
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { return nil }
        var scanner = Scanner(bytes: bytes, maxDepth: 0)
        scanner.position = offset
        do throws(JSONParseError) {
            let text = try scanner.string()
            return (text, scanner.position)
        } catch {
            return nil
        }
    }

    /// Checks that `bytes` is exactly what ``parse(_:)-([UInt8])`` accepts, failing with the same
    /// error at the same offset, without building the value: for callers that only need to know
    /// (the journal checks every stored value), which saves the tree's allocations.
    public func validate(_ bytes: [UInt8]) throws(JSONParseError) {
        let result: Result<Void, JSONParseError> = bytes.withUnsafeBytes { buffer in
            scan(buffer) { (scanner) throws(JSONParseError) in
                // One allocation for the keys of typical stored values rather than one per growth.
                scanner.openKeys.reserveCapacity(16)
                try scanner.skipValue(depth: 0)
            }
        }
        try result.get()
    }

    private func parseResult(_ buffer: UnsafeRawBufferPointer) -> Result<JSONValue, JSONParseError> {
        scan(buffer) { (scanner) throws(JSONParseError) in try scanner.value(depth: 0) }
    }

    /// Runs `readValue` over `buffer` with the rules around the one value: the size limit, and
    /// only whitespace before and after it.
    private func scan<Value>(
        _ buffer: UnsafeRawBufferPointer, _ readValue: (inout Scanner) throws(JSONParseError) -> Value
    ) -> Result<Value, JSONParseError> {
        guard buffer.count <= maxBytes else { return .failure(JSONParseError(.tooLarge, at: maxBytes)) }
        var scanner = Scanner(bytes: buffer.bindMemory(to: UInt8.self), maxDepth: maxDepth)
        do throws(JSONParseError) {
            scanner.skipWhitespace()
            let value = try readValue(&scanner)
            scanner.skipWhitespace()
            if scanner.position != scanner.bytes.count {
                throw JSONParseError(.trailingContent, at: scanner.position)
            }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }
}

struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    var scratch: [UInt8] = []
    /// The keys of the objects `skipObject` is inside, innermost last (validation only).
    var openKeys: [OpenKey] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    func peek() throws(JSONParseError) -> UInt8 {
        guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
        return bytes[position]
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw JSONParseError(.unexpectedByte, at: position)
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        for index in 0..<count {
            guard position + index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position + index) }
            guard bytes[position + index] == word.utf8Start[index] else {
                throw JSONParseError(.unexpectedByte, at: position + index)
            }
        }
        position += count
    }

    mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        guard try peek() == byte else { throw JSONParseError(.unexpectedByte, at: position) }
        position += 1
    }

    mutating func object(depth: Int) throws(JSONParseError) -> JSONObject {
        guard depth <= maxDepth else { throw JSONParseError(.tooDeep, at: position) }
        position += 1
        var members: [JSONObject.Member] = []
        members.reserveCapacity(8)
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return JSONObject(members)
        }
        var keys: Set<String> = []
        while true {
            skipWhitespace()
            let keyOffset = position
            guard try peek() == UInt8(ascii: "\"") else { throw JSONParseError(.unexpectedByte, at: position) }
            let key = try string()
            if members.count < 32 {
                for member in members where member.key == key { throw JSONParseError(.duplicateKey, at: keyOffset) }
            } else {
                if keys.isEmpty { keys = Set(members.map(\.key)) }
                guard keys.insert(key).inserted else { throw JSONParseError(.duplicateKey, at: keyOffset) }
            }
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            members.append(JSONObject.Member(key: key, value: try value(depth: depth)))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return JSONObject(members)
            default: throw JSONParseError(.unexpectedByte, at: position)
            }
        }
    }

    mutating func array(depth: Int) throws(JSONParseError) -> [JSONValue] {
        guard depth <= maxDepth else { throw JSONParseError(.tooDeep, at: position) }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return elements
            default: throw JSONParseError(.unexpectedByte, at: position)
            }
        }
    }

    /// Reads a string starting at its opening quote.
    mutating func string() throws(JSONParseError) -> String {
        try stringContent { (content, start) throws(JSONParseError) in try Self.decodeUTF8(content, at: start) }
    }

    /// Reads the string literal at `position` and hands `body` its unescaped content, not yet
    /// checked to be UTF-8 (a slice of the input when it has no escapes, else `scratch`), with
    /// the offset where that content starts.
    mutating func stringContent<T>(
        _ body: (UnsafeBufferPointer<UInt8>, Int) throws(JSONParseError) -> T
    ) throws(JSONParseError) -> T {
        position += 1
        let start = position
        // Fast path: no escapes, so the content is a slice of the input. Eight bytes at a time
        // while none is a quote, a backslash or a control character: a byte at a time was
        // 2.8k instructions of a book create's request (issue 26).
        while position < bytes.count {
            if bytes.count - position >= 8 {
                let word = UInt64(littleEndian: UnsafeRawPointer(bytes.baseAddress! + position).loadUnaligned(as: UInt64.self))
                let mask = JSONString.escapeMask(word)
                guard mask != 0 else {
                    position += 8
                    continue
                }
                // Straight to the first quote, backslash or control character.
                position += mask.trailingZeroBitCount >> 3
            }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let result = try body(UnsafeBufferPointer(rebasing: bytes[start..<position]), start)
                position += 1
                return result
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw JSONParseError(.controlCharacterInString, at: position) }
            position += 1
        }
        guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                let content = scratch
                return try content.withUnsafeBufferPointer { (raw) throws(JSONParseError) in try body(raw, start) }
            case UInt8(ascii: "\\"):
                try escape()
            case 0..<0x20:
                throw JSONParseError(.controlCharacterInString, at: position)
            default:
                scratch.append(byte)
                position += 1
            }
        }
        throw JSONParseError(.unexpectedEnd, at: position)
    }

    static func decodeUTF8(_ slice: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONParseError) -> String {
        if Self.isASCII(slice) { return String(decoding: slice, as: UTF8.self) }
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw JSONParseError(.invalidUTF8, at: offset)
        }
        return text
    }

    static func isASCII(_ slice: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        // Eight bytes at a time: no byte of a word of ASCII has its high bit set.
        while slice.count - index >= 8 {
            guard UnsafeRawPointer(slice.baseAddress! + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 else { return false }
            index += 8
        }
        while index < slice.count {
            guard slice[index] < 0x80 else { return false }
            index += 1
        }
        return true
    }

    /// Decodes one escape sequence starting at its backslash into `scratch`.
    mutating func escape() throws(JSONParseError) {
        let escapeOffset = position
        position += 1
        let kind = try peek()
        position += 1
        switch kind {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw JSONParseError(.invalidEscape, at: escapeOffset) }
                position += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.invalidEscape, at: escapeOffset) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw JSONParseError(.invalidEscape, at: escapeOffset)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw JSONParseError(.invalidEscape, at: escapeOffset) }
            scratch.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw JSONParseError(.invalidEscape, at: escapeOffset)
        }
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        var result: UInt32 = 0
        for _ in 0..<4 {
            let byte = try peek()
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(.invalidEscape, at: position)
            }
            result = result << 4 | UInt32(digit)
            position += 1
        }
        return result
    }

    mutating func digits() -> Int {
        let start = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            position += 1
        }
        return position - start
    }

    mutating func number() throws(JSONParseError) -> JSONValue {
        let start = position
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0 else { throw JSONParseError(.invalidNumber, at: position) }
        if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
            throw JSONParseError(.invalidNumber, at: integerStart)
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard digits() > 0 else { throw JSONParseError(.invalidNumber, at: position) }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { throw JSONParseError(.invalidNumber, at: position) }
        }
        if isInteger, integerDigits <= 18 {
            var magnitude = 0
            for index in integerStart..<position { magnitude = magnitude &* 10 &+ Int(bytes[index] &- 0x30) }
            return .integer(negative ? -magnitude : magnitude)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let exact = Int(text) { return .integer(exact) }
        guard let double = Double(text), double.isFinite else { throw JSONParseError(.numberOutOfRange, at: start) }
        return .double(double)
    }
}
