#if canImport(Glibc)
import Glibc
#endif
import JSON

/// The `PARTITION` file in a partition's journal directory (`DATA/<service>/p<N>/`): which
/// service, which partition, and of how many. Holding the directory is owning the partition; the
/// manifest lets a worker refuse a directory that was copied to the wrong place or belongs to a
/// cluster of another partition count.
public struct PartitionManifest: Sendable, Equatable {
    /// The manifest's file name in the partition's directory.
    public static let fileName = "PARTITION"
    /// The most bytes a manifest file may have; a larger one is refused unread.
    public static let maximumBytes = 4096

    /// The stateful service, e.g. `books`.
    public let service: String
    /// The partition, in `0..<partitions`.
    public let partition: Int
    /// The cluster's partition count.
    public let partitions: Int

    /// A manifest of `partition` of `partitions` of `service`.
    public init(service: String, partition: Int, partitions: Int) {
        self.service = service
        self.partition = partition
        self.partitions = partitions
    }

    /// `{"service":"books","partition":3,"partitions":8}` and a newline.
    public var json: [UInt8] {
        var object = JSONObject()
        object.append("service", .string(service))
        object.append("partition", .integer(partition))
        object.append("partitions", .integer(partitions))
        return JSONValue.object(object).serialized() + [UInt8(ascii: "\n")]
    }

    /// The manifest in `directory`.
    /// - Throws: `PartitionLayoutError` naming the file when it is missing, unreadable, larger
    ///   than ``maximumBytes`` or not a manifest.
    public static func read(in directory: String) throws(PartitionLayoutError) -> PartitionManifest {
        let path = directory + "/" + fileName
        let bytes = try LayoutFiles.contents(of: path, limit: maximumBytes)
        do {
            var reader = try JSONObjectReader(JSONParser(maxBytes: maximumBytes, maxDepth: 4).parse(bytes))
            let manifest = PartitionManifest(
                service: try reader.string("service", length: 1...64), partition: try reader.integer("partition", in: 0...Int(Int32.max)),
                partitions: try reader.integer("partitions", in: 1...Int(Int32.max)))
            try reader.rejectUnknownMembers()
            return manifest
        } catch {
            throw PartitionLayoutError(path: path, "is not a partition manifest: \(error)")
        }
    }

    /// Writes the manifest into `directory` durably: a temporary file, synced, renamed into
    /// place, then the directory synced, so that a crash leaves either no manifest or this one.
    public func write(in directory: String) throws(PartitionLayoutError) {
        try LayoutFiles.replace(directory + "/" + Self.fileName, with: json)
    }
}
