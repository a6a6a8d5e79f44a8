/// The simplest `JournalState`: every live value by collection and key.
///
/// Tools use it to count live entities and to compact a journal without knowing what its values mean.
public struct KeyedJournalState: JournalState, Sendable, Equatable {
    /// The live values: collection → key → JSON object.
    public private(set) var collections: [String: [String: [UInt8]]] = [:]
    /// Changes applied so far; with the live counts it tells `reserveCapacity` how many of the
    /// journal's changes end up live.
    private var appliedChanges = 0

    /// An empty state.
    public init() {}

    /// Stores the change's value under its collection and key, or removes the key for a delete.
    public mutating func apply(_ change: JournalChange) {
        appliedChanges += 1
        if let value = change.value {
            collections[change.collection, default: [:]][change.key] = value
        } else if collections[change.collection]?.removeValue(forKey: change.key) != nil,
                  collections[change.collection]?.isEmpty == true {
            collections[change.collection] = nil
        }
    }

    /// Reserves room in each collection for its share of `estimate`, scaled by how many of the
    /// changes applied so far are still live (an overwrite-heavy journal reserves little).
    public mutating func reserveCapacity(forChanges estimate: Int) {
        guard appliedChanges > 0, estimate > appliedChanges else { return }
        let scale = Double(estimate) / Double(appliedChanges)
        for collection in collections.keys {
            collections[collection]!.reserveCapacity(Int(Double(collections[collection]!.count) * scale))
        }
    }

    /// Two states are equal when they hold the same live values, however they got there.
    public static func == (lhs: KeyedJournalState, rhs: KeyedJournalState) -> Bool {
        lhs.collections == rhs.collections
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
