/// One partition a service instance holds: the learners it may serve are exactly those whose
/// partition (by ``scheme``) is ``partition``. A partitioned worker checks every request's
/// learner against it, so that a client that computed the wrong partition (or a hostile one)
/// never writes into another partition's journal.
public struct OwnedPartition: Sendable, Hashable {
    /// The cluster's scheme.
    public let scheme: PartitionScheme
    /// The partition held, in `scheme.all`.
    public let partition: Int

    /// Partition `partition` of `scheme`.
    /// - Throws: ``PartitionError`` when `partition` is not one of `scheme`'s.
    public init(_ partition: Int, of scheme: PartitionScheme) throws(PartitionError) {
        guard scheme.all.contains(partition) else {
            throw PartitionError("partition \(partition) is outside 0-\(scheme.count - 1)")
        }
        self.scheme = scheme
        self.partition = partition
    }

    /// `nil` when `learner` belongs to this partition; otherwise why it may not be served here,
    /// naming both partitions.
    public func refusal(ofLearner learner: String) -> String? {
        let home = scheme.partition(ofLearner: learner)
        guard home != partition else { return nil }
        return "belongs to partition \(home) of \(scheme.count), not to partition \(partition), which this worker serves"
    }
}
