/// One change to a keyed collection, as the journal stores it: a put of a JSON object, or a delete.
///
/// The journal never interprets `value`; it is the caller's compact JSON object (no raw newline).
public struct JournalChange: Sendable, Equatable {
    /// The collection the key belongs to, e.g. `books` or `progress`.
    public let collection: String
    /// The entity's key within its collection.
    public let key: String
    /// The entity's new JSON object, or `nil` when the change deletes it.
    public let value: [UInt8]?

    /// A change that stores `value` (a compact JSON object) under `key`.
    public static func put(_ collection: String, key: String, value: [UInt8]) -> JournalChange {
        JournalChange(collection: collection, key: key, value: value)
    }

    /// A change that removes `key`.
    public static func delete(_ collection: String, key: String) -> JournalChange {
        JournalChange(collection: collection, key: key, value: nil)
    }
}

/// The in-memory state that a journal's records build; the caller owns it and its meaning.
public protocol JournalState {
    /// Applies one committed change, during replay and after each acknowledged write.
    ///
    /// A change whose value the state cannot decode (or whose value format is newer than it
    /// reads) throws, leaving the state as it was: replay then stops with a `JournalError`
    /// naming the record, and never skips it. A state that takes every value need not throw.
    mutating func apply(_ change: JournalChange) throws(UndecodableValue)
    /// Changes that rebuild the current state from nothing; compaction writes these.
    func snapshot() -> [JournalChange]
    /// Calls `body` with each change of `snapshot()`, in the same order each time it is called
    /// on the same value. Compaction walks the snapshot this way, twice, so that it never holds
    /// every change at once: a state of many entities makes each change only when `body` wants
    /// it. The default walks `snapshot()`.
    func forEachSnapshotChange(_ body: (JournalChange) throws -> Void) rethrows
    /// Called during replay with an estimate of how many changes the whole journal holds, once
    /// enough of it has been read to judge; a state can reserve room for what those changes will
    /// leave live, instead of growing its tables step by step. The default does nothing.
    mutating func reserveCapacity(forChanges estimate: Int)
}

extension JournalState {
    /// Walks `snapshot()`.
    public func forEachSnapshotChange(_ body: (JournalChange) throws -> Void) rethrows {
        for change in snapshot() { try body(change) }
    }

    /// Does nothing: reserving is an optimisation a state may skip.
    public mutating func reserveCapacity(forChanges estimate: Int) {}
}
