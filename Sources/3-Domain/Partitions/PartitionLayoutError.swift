/// A partition's directory or manifest that cannot be used, or a file operation on it that
/// failed: the path at fault and why. `partitions init` and a partitioned worker refuse with it
/// (exit status 2) before creating or serving anything.
public struct PartitionLayoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or directory at fault.
    public let path: String
    /// What is wrong with it.
    public let message: String

    /// An error about `path`.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// `DATA/books/p3/PARTITION: says partition 3 of 16; this cluster has 8`.
    public var description: String { "\(path): \(message)" }
}
