import LyceumLogging

/// Reads the members of one JSON object by name, checking types and ranges, and reports
/// problems with the JSONPath of the member. It remembers which members were read so that
/// `rejectUnknownMembers()` can refuse anything else.
public struct JSONObjectReader {
    /// The object being read.
    public let object: JSONObject
    /// The JSONPath of the object itself, e.g. `$` or `$[3].content`.
    public let path: String
    /// Which members were read, by position: a bit each for the first 64 (every request), a set
    /// for the rest. The parser refuses duplicate keys, so a position names one key. Marking
    /// positions, not keys, spares each request an array of key copies and the comparisons of
    /// every member with every key read.
    private var consumedBits: UInt64 = 0
    private var consumedBeyond: Set<Int> = []

    /// Reads `value`, which must be an object found at `path`.
    public init(_ value: JSONValue, path: String = "$") throws(JSONReadError) {
        guard case .object(let object) = value else {
            throw JSONReadError(path: path, message: "expected an object, found \(value.typeName)")
        }
        self.object = object
        self.path = path
    }

    /// The JSONPath of member `key`.
    public func path(of key: String) -> String { JSONObjectReader.path(path, key) }

    /// The JSONPath of member `key` of the object at `parent`. A key that a peer may have made
    /// up is shown as ``PeerText`` shows it (cut and escaped), so that an error naming an unknown
    /// field never repeats a huge or unprintable name whole.
    public static func path(_ parent: String, _ key: String) -> String {
        let shown = PeerText.excerpt(key)
        let plain = !key.isEmpty && shown == key && key.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
        if plain { return parent + "." + key }
        return parent + "[" + String(decoding: JSONValue.string(shown).serialized(), as: UTF8.self) + "]"
    }

    /// The member's value, or `nil` when absent or `null`; marks it as read.
    public mutating func optionalValue(_ key: String) -> JSONValue? {
        guard let position = object.members.firstIndex(where: { $0.key == key }) else { return nil }
        if position < 64 { consumedBits |= 1 << UInt64(position) } else { consumedBeyond.insert(position) }
        let value = object.members[position].value
        if case .null = value { return nil }
        return value
    }

    /// The member's value; throws when absent or `null`.
    public mutating func value(_ key: String) throws(JSONReadError) -> JSONValue {
        guard let value = optionalValue(key) else { throw JSONReadError(path: path(of: key), message: "is required") }
        return value
    }

    /// A string member of `length` characters, or `nil` when absent. Unless `length` is left
    /// unbounded, the string is also held to the scalars and bytes of `TextLimit(characters:)`.
    public mutating func optionalString(_ key: String, length: ClosedRange<Int> = 0...Int.max) throws(JSONReadError) -> String? {
        guard let value = optionalValue(key) else { return nil }
        guard case .string(let text) = value else {
            throw JSONReadError(path: path(of: key), message: "expected a string, found \(value.typeName)")
        }
        if length != 0...Int.max, let violation = TextLimit(characters: length).violation(of: text) {
            throw JSONReadError(path: path(of: key), message: violation)
        }
        return text
    }

    /// A required string member of `length` characters.
    public mutating func string(_ key: String, length: ClosedRange<Int> = 0...Int.max) throws(JSONReadError) -> String {
        guard let text = try optionalString(key, length: length) else {
            throw JSONReadError(path: path(of: key), message: "is required")
        }
        return text
    }

    /// An integer member within `range`, or `nil` when absent. Integral floating values count.
    public mutating func optionalInteger(_ key: String, in range: ClosedRange<Int> = Int.min...Int.max) throws(JSONReadError) -> Int? {
        guard let value = optionalValue(key) else { return nil }
        let number: Int
        switch value {
        case .integer(let exact): number = exact
        case .double(let double) where double.rounded() == double && abs(double) < 9e15: number = Int(double)
        default: throw JSONReadError(path: path(of: key), message: "expected an integer, found \(value.typeName)")
        }
        guard range.contains(number) else {
            throw JSONReadError(path: path(of: key), message: "must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return number
    }

    /// A required integer member within `range`.
    public mutating func integer(_ key: String, in range: ClosedRange<Int> = Int.min...Int.max) throws(JSONReadError) -> Int {
        guard let number = try optionalInteger(key, in: range) else {
            throw JSONReadError(path: path(of: key), message: "is required")
        }
        return number
    }

    /// A number member within `range`, or `nil` when absent.
    public mutating func optionalDouble(_ key: String, in range: ClosedRange<Double>) throws(JSONReadError) -> Double? {
        guard let value = optionalValue(key) else { return nil }
        let number: Double
        switch value {
        case .integer(let exact): number = Double(exact)
        case .double(let double): number = double
        default: throw JSONReadError(path: path(of: key), message: "expected a number, found \(value.typeName)")
        }
        guard range.contains(number) else {
            throw JSONReadError(path: path(of: key), message: "must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return number
    }

    /// A required number member within `range`.
    public mutating func double(_ key: String, in range: ClosedRange<Double>) throws(JSONReadError) -> Double {
        guard let number = try optionalDouble(key, in: range) else { throw JSONReadError(path: path(of: key), message: "is required") }
        return number
    }

    /// An array member's elements with their JSONPaths, or `nil` when absent.
    public mutating func optionalArray(_ key: String) throws(JSONReadError) -> [(value: JSONValue, path: String)]? {
        guard let value = optionalValue(key) else { return nil }
        guard case .array(let elements) = value else {
            throw JSONReadError(path: path(of: key), message: "expected an array, found \(value.typeName)")
        }
        let base = path(of: key)
        return elements.enumerated().map { (value: $0.element, path: "\(base)[\($0.offset)]") }
    }

    /// A required array member's elements with their JSONPaths.
    public mutating func array(_ key: String) throws(JSONReadError) -> [(value: JSONValue, path: String)] {
        guard let elements = try optionalArray(key) else { throw JSONReadError(path: path(of: key), message: "is required") }
        return elements
    }

    /// A reader for a required object member.
    public mutating func object(_ key: String) throws(JSONReadError) -> JSONObjectReader {
        try JSONObjectReader(try value(key), path: path(of: key))
    }

    /// A reader for an object member, or `nil` when absent.
    public mutating func optionalObject(_ key: String) throws(JSONReadError) -> JSONObjectReader? {
        guard let value = optionalValue(key) else { return nil }
        return try JSONObjectReader(value, path: path(of: key))
    }

    /// Throws for the first member that was never read.
    public func rejectUnknownMembers() throws(JSONReadError) {
        for (position, member) in object.members.enumerated() {
            let read = position < 64 ? consumedBits & (1 << UInt64(position)) != 0 : consumedBeyond.contains(position)
            if !read { throw JSONReadError(path: path(of: member.key), message: "is not a known field") }
        }
    }
}
