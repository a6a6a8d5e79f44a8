/// How far a long journal operation (replay, compaction) has come, reported as it goes.
public struct JournalProgress: Sendable, Equatable {
    /// The operation being reported.
    public enum Phase: String, Sendable {
        /// Reading the journal back and delivering its changes to the caller's state.
        case replay
        /// Writing the live state and the records committed meanwhile to a new journal file.
        case compaction
    }

    /// The operation being reported.
    public let phase: Phase
    /// Bytes processed so far.
    public let bytesDone: UInt64
    /// Bytes the operation will process in all (for compaction, an estimate until the end).
    public let bytesTotal: UInt64

    /// The share done, from 0 to 1.
    public var fraction: Double { bytesTotal == 0 ? 1 : min(1, Double(bytesDone) / Double(bytesTotal)) }
}
