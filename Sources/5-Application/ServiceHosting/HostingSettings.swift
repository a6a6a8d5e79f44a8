import Books
import Configuration
import LyceumSupport
import Partitions

/// What a process hosting the learning services needs of the settings (`ServiceHost`): where
/// the journals and the catalog are, how durable a write is, how large a reply page may be,
/// and which partitions it may hold. Nothing of brokers, sockets or logs.
public struct HostingSettings: Sendable {
    /// The data directory; each stateful service keeps its journal in a subdirectory named after it.
    public var dataDirectory: String
    /// Catalog files or directories; empty means the sample catalog that ships with Lyceum.
    public var catalogPaths: [String]
    /// When a journaled write counts as durable.
    public var durability: DurabilityPolicy
    /// Bytes of items one page of a list reply may hold.
    public var maxReplyBytes: Int
    /// How much one learner's library may hold.
    public var libraryLimits: LibraryLimits
    /// The partition scheme of the cluster; `nil` when unpartitioned.
    public var partitionScheme: PartitionScheme?
    /// Whether a partitioned worker may start holding no partition of a service it serves.
    public var join: Bool

    /// The hosting settings of `settings`: its plain values converted into the types of the
    /// modules that apply them.
    public init(_ settings: Settings) {
        dataDirectory = settings.dataDirectory
        catalogPaths = settings.catalogPaths
        durability = settings.durability
        maxReplyBytes = settings.maxReplyBytes
        libraryLimits = LibraryLimits(books: settings.maxBooksPerLearner, contentBytes: settings.maxLibraryBytes)
        partitionScheme = settings.partitionScheme
        join = settings.join
    }
}

extension Settings {
    /// What `ServiceHost` needs of these settings.
    public var hosting: HostingSettings { HostingSettings(self) }

    /// The partition scheme of `partitions`; `nil` when unpartitioned (`partitions` is checked
    /// against `PartitionScheme.counts` by its declaration).
    public var partitionScheme: PartitionScheme? { try? PartitionScheme(count: partitions) }
}
