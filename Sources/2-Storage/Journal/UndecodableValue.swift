import JSON

/// Why a stored value does not decode: what a service's decoder throws.
public enum ValueDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value is not one this build's decoder accepts; the text says which part and why.
    case malformed(String)
    /// The value declares a value format newer than the newest this build reads.
    case newerFormat(found: Int, newestReadable: Int)

    /// `value` when a decoder found the member `name`; otherwise an error saying it is missing.
    public static func required<Value>(_ value: Value?, _ name: String) throws(ValueDecodingError) -> Value {
        guard let value else { throw .malformed("the member \"\(name)\" is missing") }
        return value
    }

    /// What is wrong, as a phrase for people.
    public var description: String {
        switch self {
        case .malformed(let text): text
        case .newerFormat(let found, let newest):
            "written by a newer Lyceum: value format v\(found), this build reads up to v\(newest)"
        }
    }
}

/// A change that a `JournalState` could not take, because its value does not decode.
/// `JournalState.apply(_:)` throws it; replay turns it into a `JournalError` naming the file,
/// offset and sequence, so that no change is ever skipped.
public struct UndecodableValue: Error, Sendable, Equatable, CustomStringConvertible {
    /// The change's collection.
    public let collection: String
    /// The change's key.
    public let key: String
    /// What is wrong with the value.
    public let error: ValueDecodingError

    /// An error about the value of `key` in `collection`.
    public init(collection: String, key: String, _ error: ValueDecodingError) {
        self.collection = collection
        self.key = key
        self.error = error
    }

    /// An error about the value of `change`.
    public init(_ change: JournalChange, _ error: ValueDecodingError) {
        self.init(collection: change.collection, key: change.key, error)
    }

    /// The value's collection and key, and what is wrong with it, in one sentence.
    public var description: String {
        switch error {
        case .malformed: "the value of \(collection)/\(key) does not decode: \(error)"
        case .newerFormat: "the value of \(collection)/\(key) was \(error)"
        }
    }
}

/// The version stamp of a stored value: the member `"value_format":N` that every value the
/// services store begins with. A value without it was written before values were versioned and is
/// version 1. A decoder reads every version up to its own (migrating older ones as it decodes) and
/// refuses a newer one with `ValueDecodingError.newerFormat`; see `protocol/journal.md`.
public enum ValueFormat {
    /// The member's name.
    public static let member = "value_format"
    /// The version of a value that has no stamp.
    public static let unstamped = 1

    /// The format `value` declares by its leading stamp (`unstamped` when it has none); throws
    /// unless a decoder that reads formats up to `newest` can read it.
    public static func version(of value: [UInt8], newest: Int) throws(ValueDecodingError) -> Int {
        let declared = value.withUnsafeBytes { bytes -> UInt64? in
            var cursor = LineCursor(bytes)
            guard cursor.consume(#"{"value_format":"#) else { return UInt64(unstamped) }
            return cursor.readUnsigned()
        }
        guard let declared, declared >= unstamped else { throw .malformed("\(member) is not a positive integer") }
        guard declared <= newest else { throw .newerFormat(found: Int(clamping: declared), newestReadable: newest) }
        return Int(declared)
    }

    /// The members of `value`, a JSON object, with the format it declares; throws when a decoder
    /// that reads formats up to `newest` cannot read it, or when it is not a JSON object.
    public static func object(_ value: [UInt8], newest: Int) throws(ValueDecodingError) -> (format: Int, members: JSONObject) {
        let format = try version(of: value, newest: newest)
        guard case .success(.object(let members)) = Result(catching: { () throws(JSONParseError) in try JSONParser().parse(value) })
        else { throw .malformed("not a JSON object") }
        return (format, members)
    }
}
