import DurableFiles
#if canImport(Glibc)
import Glibc
#endif

/// Every failure the journal reports: a named code plus the file, byte offset and sequence number
/// it concerns, when they apply.
public struct JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a stable name that callers and tools can match on.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable snake_case name, e.g. `mid_journal_corruption`.
        public let name: String

        /// Another process holds the data directory's lock; `holderPID` names it when known.
        public static let locked = Code(name: "locked")
        /// A system call failed; `systemError` holds its errno.
        public static let io = Code(name: "io")
        /// Writing a record failed (for example `ENOSPC`); it was rolled back and nothing changed.
        public static let writeFailed = Code(name: "write_failed")
        /// A sync failed (`systemError` holds its errno). Nothing it covered was acknowledged;
        /// the journal refuses every later write, and the process stops
        /// (protocol/journal.md, *A failed sync*).
        public static let syncFailed = Code(name: "sync_failed")
        /// A change the caller asked to append is malformed; nothing was written.
        public static let invalidChange = Code(name: "invalid_change")
        /// A record is larger than the configured maximum; nothing was written.
        public static let recordTooLarge = Code(name: "record_too_large")
        /// The first line is not a header of a journal format this build reads.
        public static let invalidHeader = Code(name: "invalid_header")
        /// The last record is incomplete or damaged and nothing valid follows it: a write torn by a
        /// crash. Opening the journal cuts it off (saving the bytes); `check` reports it.
        public static let tornTail = Code(name: "torn_tail")
        /// A damaged record is followed by valid ones: the journal is refused, nothing is skipped.
        public static let midJournalCorruption = Code(name: "mid_journal_corruption")
        /// The compacted snapshot at the start of the journal is damaged or incomplete.
        public static let corruptSnapshot = Code(name: "corrupt_snapshot")
        /// A checksummed record holds a value that the services cannot decode, or one written in a
        /// newer value format: the journal is refused, nothing is skipped.
        public static let undecodableValue = Code(name: "undecodable_value")
        /// A valid record's sequence number is not exactly one more than its predecessor's.
        public static let sequenceGap = Code(name: "sequence_gap")
        /// Records asked for were compacted into the snapshot: a replica needs the snapshot first.
        public static let snapshotNeeded = Code(name: "snapshot_needed")
        /// A replicated record line is damaged, not a record, or does not follow the journal's last one.
        public static let invalidRecord = Code(name: "invalid_record")
        /// The journal was closed; nothing more can be appended.
        public static let closed = Code(name: "closed")
        /// Another compaction is running, or the captured state does not match the journal.
        public static let compactionRejected = Code(name: "compaction_rejected")

        /// The code's name.
        public var description: String { name }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people: what happened and, where it helps, what to do.
    public let message: String
    /// The file concerned, when there is one.
    public let path: String?
    /// The byte offset in `path` where the problem starts, when known.
    public let offset: UInt64?
    /// The sequence number concerned (the record's own, or the one expected there), when known.
    public let sequence: UInt64?
    /// The errno of a failed system call, when one failed.
    public let systemError: Int32?
    /// The process holding the data directory's lock, for `locked`, when it could be read.
    public let holderPID: Int32?

    /// Creates an error; only `code` and `message` are required.
    public init(
        _ code: Code, _ message: String, path: String? = nil, offset: UInt64? = nil,
        sequence: UInt64? = nil, systemError: Int32? = nil, holderPID: Int32? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
        self.sequence = sequence
        self.systemError = systemError
        self.holderPID = holderPID
    }

    /// Whether a system call failed because the file system is out of space (or of the
    /// user's quota): what a client is told apart (`storage_full`) and the metrics count apart.
    public var isStorageFull: Bool { systemError == ENOSPC || systemError == EDQUOT }

    /// The code, the message, and every piece of context that is known, on one line.
    public var description: String {
        var text = "journal \(code): \(message)"
        if let path { text += " [file \(path)" + (offset.map { " offset \($0)" } ?? "") + "]" }
        if let sequence { text += " [seq \(sequence)]" }
        if let systemError { text += " [errno \(systemError): \(SystemCall.describe(systemError))]" }
        if let holderPID { text += " [held by pid \(holderPID)]" }
        return text
    }
}

extension JournalError {
    /// The journal's error for a failed durable-file call: `syncFailed` for a sync, else `io`.
    init(_ error: DurableFileError) {
        self.init(error.isSyncFailure ? .syncFailed : .io, "\(error.operation) failed: \(error.reason)", path: error.path, systemError: error.systemError)
    }
}
