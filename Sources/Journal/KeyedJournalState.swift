/// The simplest `JournalState`: every live value by collection and key.
///
/// Tools use it to count live entities and to compact a journal without knowing what its values mean.
public struct KeyedJournalState: JournalState, Sendable, Equatable {
    /// The live values: collection → key → JSON object.
    public private(set) var collections: [String: [String: [UInt8]]] = [:]

    /// An empty state.
    public init() {}

    public mutating func apply(_ change: JournalChange) {
        if let value = change.value {
            collections[change.collection, default: [:]][change.key] = value
        } else if collections[change.collection]?.removeValue(forKey: change.key) != nil,
                  collections[change.collection]?.isEmpty == true {
            collections[change.collection] = nil
        }
    }

    /// Every live value as a put, collections and keys in sorted order.
    public func snapshot() -> [JournalChange] {
        collections.keys.sorted().flatMap { collection in
            let values = collections[collection]!
            return values.keys.sorted().map { JournalChange.put(collection, key: $0, value: values[$0]!) }
        }
    }

    /// The live value of `key` in `collection`, if any.
    public func value(in collection: String, key: String) -> [UInt8]? { collections[collection]?[key] }

    /// How many live keys each collection holds.
    public var liveCounts: [String: Int] { collections.mapValues(\.count) }
}
