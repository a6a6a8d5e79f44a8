/// A JSON object whose members keep the order in which they were written.
///
/// Lookup is linear, which beats hashing for the small objects of a request or a record.
public struct JSONObject: Sendable, Equatable, Sequence {
    /// One `"key": value` pair.
    public struct Member: Sendable, Equatable {
        /// The member's name.
        public var key: String
        /// The member's value.
        public var value: JSONValue

        /// A member `key: value`.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in document order.
    public private(set) var members: [Member]

    /// An object with `members`, in that order; keys are expected to be distinct.
    public init(_ members: [Member] = []) { self.members = members }

    /// The value stored under `key`, or `nil` when absent.
    public subscript(key: String) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// Number of members.
    public var count: Int { members.count }

    /// Adds a member at the end; the caller keeps keys distinct.
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    /// Iterates the members in document order.
    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }
}
