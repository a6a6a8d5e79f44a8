/// The names a partition goes by: its Majordomo service (`books.p17`: the stateful service's
/// name, `.p`, the partition number in decimal without leading zeros) and its journal's
/// directory under the service's (`p17`). Workers register the service names of the partitions
/// they hold; clients that know the scheme may call them directly through any broker.
public enum PartitionName {
    /// The Majordomo service of `partition` of `service`.
    public static func service(_ service: String, partition: Int) -> String {
        "\(service).\(directory(partition))"
    }

    /// The journal directory of `partition`, relative to its service's data directory.
    public static func directory(_ partition: Int) -> String {
        "p\(partition)"
    }

    /// The partition a directory name (`p17`) stands for; `nil` for any other name, including
    /// `p017`, so that one partition has exactly one directory name.
    public static func partition(ofDirectory name: Substring) -> Int? {
        guard name.first == "p", let number = Int(name.dropFirst()), number >= 0,
              String(number) == name.dropFirst() else { return nil }
        return number
    }

    /// The stateful service and partition a partition's service name stands for; `nil` when
    /// `name` is not one.
    public static func parse(service name: String) -> (service: String, partition: Int)? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex,
              let partition = partition(ofDirectory: name[name.index(after: dot)...]) else { return nil }
        return (String(name[..<dot]), partition)
    }
}
