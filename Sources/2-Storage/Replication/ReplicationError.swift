/// Why a replication step failed: a message that is not the protocol's, an epoch history that
/// cannot be trusted, or a journal that refused a record. Codes are snake_case, as everywhere.
public struct ReplicationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable {
        /// A message that is not valid JSON of the protocol, or exceeds its limits.
        case badMessage = "bad_message"
        /// An append of an epoch older than the one the replica adopted.
        case staleEpoch = "stale_epoch"
        /// Records that do not follow the replica's log (the leader resends from its position).
        case gap
        /// A record line whose checksum or sequence is wrong.
        case badRecord = "bad_record"
        /// The epoch history file is damaged or cannot be written.
        case history
        /// The records asked for are inside the replica's snapshot (compacted away): the asker is
        /// rebuilt from a journal image instead (protocol/replication.md, *Rebuilding a replica*).
        case snapshotNeeded = "snapshot_needed"
        /// The journal failed (a write or sync error): the replica stops acknowledging.
        case storage
        /// A message of a format version this build does not read (``ReplicationFormat``):
        /// refused before any of it was read.
        case unsupportedVersion = "unsupported_version"
    }

    /// What went wrong.
    public let code: Code
    /// What a person needs: the field, the file and line, the epochs involved.
    public let message: String

    /// An error of `code`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
