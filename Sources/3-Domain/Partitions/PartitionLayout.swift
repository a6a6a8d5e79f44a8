import Foundation

/// The partitions' journal directories under a data directory: `DATA/<service>/p<N>/`, each
/// with its `PARTITION` manifest. Holding such a directory is owning that partition: a worker
/// serves what it finds here, and only `partitions init` (at cluster creation) or a move
/// creates one.
public struct PartitionLayout: Sendable {
    /// The data directory.
    public let dataDirectory: String
    /// The cluster's partition scheme.
    public let scheme: PartitionScheme

    /// The layout under `dataDirectory` of a cluster of `scheme`.
    public init(dataDirectory: String, scheme: PartitionScheme) {
        self.dataDirectory = dataDirectory
        self.scheme = scheme
    }

    /// The directory of `service`'s partitions, `DATA/<service>`.
    public func serviceDirectory(_ service: String) -> String {
        (dataDirectory as NSString).appendingPathComponent(service)
    }

    /// The journal directory of `partition` of `service`, `DATA/<service>/p<N>`.
    public func directory(of service: String, partition: Int) -> String {
        (serviceDirectory(service) as NSString).appendingPathComponent(PartitionName.directory(partition))
    }

    /// The partitions of `service` held here, in order: every `p<N>` directory under
    /// `DATA/<service>`, each checked against its manifest. Other names (a move's leftovers)
    /// are not partitions and are skipped.
    /// - Throws: `PartitionLayoutError` naming the first directory or manifest that is missing,
    ///   unreadable or disagrees (another service, partition or count), or an unpartitioned
    ///   journal in `DATA/<service>` (whose learners a partitioned worker would silently drop).
    public func heldPartitions(of service: String) throws(PartitionLayoutError) -> [OwnedPartition] {
        let parent = serviceDirectory(service)
        let unpartitioned = (parent as NSString).appendingPathComponent(Self.journalFile)
        guard !LayoutFiles.exists(unpartitioned) else {
            throw PartitionLayoutError(
                path: unpartitioned, "is the journal of an unpartitioned deployment; a partitioned worker would not serve its learners")
        }
        var held: [OwnedPartition] = []
        for number in try Self.partitionDirectories(in: parent) {
            let partition: OwnedPartition
            do throws(PartitionError) {
                partition = try OwnedPartition(number, of: scheme)
            } catch {
                throw PartitionLayoutError(path: directory(of: service, partition: number), "\(error.message) (setting partitions is \(scheme.count))")
            }
            try check(service: service, partition: number)
            held.append(partition)
        }
        return held
    }

    /// Refuses, for an unpartitioned process, a service directory that holds partitions: it
    /// would open an empty journal beside them and serve none of their learners.
    /// - Throws: `PartitionLayoutError` naming the first partition directory with a manifest.
    public static func refusePartitions(inUnpartitioned serviceDirectory: String) throws(PartitionLayoutError) {
        for number in (try? partitionDirectories(in: serviceDirectory)) ?? [] {
            let directory = (serviceDirectory as NSString).appendingPathComponent(PartitionName.directory(number))
            if LayoutFiles.exists((directory as NSString).appendingPathComponent(PartitionManifest.fileName)) {
                throw PartitionLayoutError(path: directory, "holds a partition of a partitioned cluster; set partitions to serve it")
            }
        }
    }

    /// The partitions whose directories (`p<N>`) are in `directory`, in order; none when it does
    /// not exist.
    /// - Throws: `PartitionLayoutError` when it exists and cannot be listed.
    public static func partitionDirectories(in directory: String) throws(PartitionLayoutError) -> [Int] {
        guard LayoutFiles.exists(directory) else { return [] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory)
                .compactMap { PartitionName.partition(ofDirectory: Substring($0)) }.sorted()
        } catch {
            throw PartitionLayoutError(path: directory, "cannot be listed: \(error.localizedDescription)")
        }
    }

    /// The journal's file name in its directory (protocol/journal.md).
    private static let journalFile = "journal.jsonl"

    /// Creates, for each of `services`, the directory and manifest of each of `partitions`.
    /// Nothing is created unless every target is free and every manifest already under `DATA`
    /// for these services is of this cluster's count.
    /// - Returns: the directories created, in order.
    /// - Throws: `PartitionLayoutError` naming the path that stops it.
    @discardableResult
    public func create(services: [String], partitions: [Int]) throws(PartitionLayoutError) -> [String] {
        for service in services {
            for existing in try existingManifests(of: service) where existing.manifest.partitions != scheme.count {
                throw PartitionLayoutError(
                    path: existing.path, "belongs to a cluster of \(existing.manifest.partitions) partitions, not \(scheme.count)")
            }
            for partition in partitions where LayoutFiles.exists(directory(of: service, partition: partition)) {
                throw PartitionLayoutError(path: directory(of: service, partition: partition), "already exists; a partition is created only once")
            }
        }
        var created: [String] = []
        for service in services {
            try LayoutFiles.makeDirectories(serviceDirectory(service))
            for partition in partitions {
                let path = directory(of: service, partition: partition)
                try LayoutFiles.makeDirectory(path)
                try PartitionManifest(service: service, partition: partition, partitions: scheme.count).write(in: path)
                created.append(path)
            }
        }
        return created
    }

    /// Refuses the directory of `partition` of `service` unless its manifest names exactly it.
    private func check(service: String, partition: Int) throws(PartitionLayoutError) {
        let path = directory(of: service, partition: partition)
        let manifest = try PartitionManifest.read(in: path)
        let file = (path as NSString).appendingPathComponent(PartitionManifest.fileName)
        guard manifest.partitions == scheme.count else {
            throw PartitionLayoutError(path: file, "says \(manifest.partitions) partitions; this cluster has \(scheme.count) (setting partitions)")
        }
        guard manifest.service == service, manifest.partition == partition else {
            throw PartitionLayoutError(
                path: file, "names partition \(manifest.partition) of \(manifest.service), but its directory is that of partition \(partition) of \(service)")
        }
    }

    /// The manifests in the `p<N>` directories of `service`, whatever their count, with their paths.
    private func existingManifests(of service: String) throws(PartitionLayoutError) -> [(path: String, manifest: PartitionManifest)] {
        var manifests: [(path: String, manifest: PartitionManifest)] = []
        for partition in try Self.partitionDirectories(in: serviceDirectory(service)) {
            let path = directory(of: service, partition: partition)
            guard LayoutFiles.exists((path as NSString).appendingPathComponent(PartitionManifest.fileName)) else { continue }
            manifests.append(((path as NSString).appendingPathComponent(PartitionManifest.fileName), try PartitionManifest.read(in: path)))
        }
        return manifests
    }
}
