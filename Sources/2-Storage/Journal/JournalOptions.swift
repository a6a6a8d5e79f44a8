import LyceumSupport

/// The steps of a compaction at which a test can stop the process to prove recovery from each.
@_spi(Testing)
public enum CompactionStep: String, Sendable, CaseIterable {
    /// The new file holds the snapshot and the records carried over, not yet synced.
    case snapshotWritten
    /// The new file is complete and synced; the rename has not happened.
    case beforeRename
    /// The new file has replaced the journal; the directory has not been synced.
    case afterRename
}

/// How a journal behaves; the defaults suit a production service.
public struct JournalOptions: Sendable {
    /// When an append counts as durable. Default: `.always`.
    public var durability: DurabilityPolicy
    /// Automatic compaction starts when the journal is larger than this multiple of the live data
    /// (the size of its last snapshot). Default: 2.
    public var compactionRatio: Double
    /// Automatic compaction never starts below this journal size. Default: 64 MiB.
    public var compactionMinimumBytes: UInt64
    /// The largest record `append` accepts, in bytes. Default: 64 MiB; the format caps a line at 256 MiB.
    public var maximumRecordBytes: Int
    /// The labels of this journal's metrics (e.g. `[("service", "books")]`); see `JournalMetrics`.
    public var metricDimensions: [(String, String)] = []
    /// Under `always`, the longest sync after which a loop's thread still syncs its batch itself
    /// (`PendingWrite.whenDurable`): once one takes longer, its batches go to the acknowledger
    /// thread, so that the loop keeps serving reads while the disk is slow, until a sync is quick
    /// again. Default: 2 ms (this machine's syncs take 0.4 ms, 0.8 ms at p99).
    public var loopSyncLimit: Duration = .milliseconds(2)
    /// Called at each compaction step; tests use it to crash the process there.
    @_spi(Testing) public var compactionStepHook: (@Sendable (CompactionStep) -> Void)?

    /// Options with the given values and defaults for the rest.
    public init(
        durability: DurabilityPolicy = .always, compactionRatio: Double = 2,
        compactionMinimumBytes: UInt64 = 64 << 20, maximumRecordBytes: Int = 64 << 20
    ) {
        self.durability = durability
        self.compactionRatio = compactionRatio
        self.compactionMinimumBytes = compactionMinimumBytes
        self.maximumRecordBytes = maximumRecordBytes
    }
}
