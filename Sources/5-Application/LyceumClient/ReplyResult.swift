import JSON

/// A result the client reads out of a reply's parsed JSON, member by member, with the project's
/// ``JSONObjectReader``: what Foundation's `JSONDecoder` did by reflection, at a fraction of its
/// cost per call.
protocol ReplyResult {
    /// Reads the result from the object `reply` holds. Members it does not read are ignored, so
    /// that a newer server may add some.
    /// - Throws: `JSONReadError` naming the member that is missing or of the wrong type.
    init(reply: inout JSONObjectReader) throws(JSONReadError)
}

extension JSONObjectReader {
    /// A required boolean member.
    mutating func bool(_ key: String) throws(JSONReadError) -> Bool {
        let value = try value(key)
        guard case .bool(let flag) = value else {
            throw JSONReadError(path: path(of: key), message: "expected a boolean, found \(value.typeName)")
        }
        return flag
    }

    /// A number member, or `nil` when absent or `null`.
    mutating func optionalNumber(_ key: String) throws(JSONReadError) -> Double? {
        try optionalDouble(key, in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude)
    }

    /// A required number member.
    mutating func number(_ key: String) throws(JSONReadError) -> Double {
        try double(key, in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude)
    }

    /// A required object member, read as `Result`.
    mutating func result<Result: ReplyResult>(_ key: String, as: Result.Type = Result.self) throws(JSONReadError) -> Result {
        try Self.read(try value(key), at: path(of: key))
    }

    /// An object member read as `Result`, or `nil` when absent or `null`.
    mutating func optionalResult<Result: ReplyResult>(_ key: String, as: Result.Type = Result.self) throws(JSONReadError) -> Result? {
        guard let value = optionalValue(key) else { return nil }
        return try Self.read(value, at: path(of: key))
    }

    /// A required array member whose elements are objects, each read as `Element`.
    mutating func results<Element: ReplyResult>(_ key: String, of: Element.Type = Element.self) throws(JSONReadError) -> [Element] {
        try elements(key) { (value, path) throws(JSONReadError) in try Self.read(value, at: path()) }
    }

    /// A required array member of strings.
    mutating func strings(_ key: String) throws(JSONReadError) -> [String] {
        try elements(key) { (value, path) throws(JSONReadError) in
            guard case .string(let text) = value else { throw JSONReadError(path: path(), message: "expected a string, found \(value.typeName)") }
            return text
        }
    }

    /// A required array member of integers.
    mutating func integers(_ key: String) throws(JSONReadError) -> [Int] {
        try elements(key) { (value, path) throws(JSONReadError) in
            guard case .integer(let number) = value else { throw JSONReadError(path: path(), message: "expected an integer, found \(value.typeName)") }
            return number
        }
    }

    /// The elements of a required array member, each read by `read`, which is given the
    /// element's path to name in an error: built only then, since paths cost more than the reading.
    private mutating func elements<Element>(
        _ key: String, _ read: (JSONValue, () -> String) throws(JSONReadError) -> Element
    ) throws(JSONReadError) -> [Element] {
        let value = try value(key)
        guard case .array(let elements) = value else {
            throw JSONReadError(path: path(of: key), message: "expected an array, found \(value.typeName)")
        }
        var results: [Element] = []
        results.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            results.append(try read(element, { "\(self.path(of: key))[\(index)]" }))
        }
        return results
    }

    /// Reads `value` as a `Result` with a reader whose paths start empty, and completes an
    /// error's path with `path`: the paths of nested objects are built only for an error.
    private static func read<Result: ReplyResult>(_ value: JSONValue, at path: @autoclosure () -> String) throws(JSONReadError) -> Result {
        do {
            var reader = try JSONObjectReader(value, path: "")
            return try Result(reply: &reader)
        } catch {
            throw JSONReadError(path: path() + error.path, message: error.message)
        }
    }
}
