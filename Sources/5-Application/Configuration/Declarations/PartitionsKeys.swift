import Access

extension SettingKey {
    /// Partitioned clusters' (issue 17).
    static let partitionsKeys = [partitions, node, join]

    /// The partition counts a cluster may be set to have; `Partitions.PartitionScheme.counts`,
    /// which the scheme checks, is the same (`SettingBoundsTests`).
    public static let partitionCounts = 1...4096

    /// `Settings.partitions`.
    public static let partitions = one(
        "partitions", \.partitions,
        SettingType(
            expecting: "0 (unpartitioned) or a partition count from \(partitionCounts.lowerBound) to \(partitionCounts.upperBound)",
            { text in text == "0" ? 0 : Int(text).flatMap { partitionCounts.contains($0) ? $0 : nil } }, format: String.init),
        commands: [.broker, .worker, .status, .restore], placeholder: "N",
        help: "the cluster's partition count for books and progress (0: unpartitioned)")
    /// `Settings.node`.
    public static let node = one(
        "node", \.node, .identifier("1-\(Identifier.maximumLength) of the characters A-Z a-z 0-9 . _ - : @ +"),
        commands: [.worker], placeholder: "NAME", help: "this worker's node name; its node service is lyceum.node.NAME")
    /// `Settings.join`.
    public static let join = `switch`(
        "join", \.join, commands: [.worker], help: "a partitioned worker may start holding no partition, to receive its share by moves")
}
