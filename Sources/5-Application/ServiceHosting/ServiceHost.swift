import Catalog
import Configuration
import EventSubscription
import EventPublishing
import Foundation
import Journal
import LearningServices
import LyceumLifecycle
import LyceumLogging
import Partitions
import Replication
import Synchronization

/// The learning services of one process with everything they stand on: the catalog, and for
/// each stateful service its journal in `DATA/<service>/` (with `partitions`, one instance and
/// journal per partition held, in `DATA/<service>/p<N>/`), replayed on start and compacted
/// automatically as it grows. `close()` (or release) makes every write durable and unlocks the
/// data directories.
public final class ServiceHost: Sendable {
    /// The services' instances open at the start, in the order asked for: a partitioned
    /// service has one per partition held, none on a worker that joined empty.
    public let services: [HostedService]
    /// The services asked for, whether or not an instance of each is open: what a publisher
    /// and a snapshot endpoint are needed for, before partitions move in.
    public let descriptors: [ServiceDescriptor]
    /// The catalog being served; `reloadCatalog()` replaces it.
    public let catalog: CatalogStore
    /// The journals open now, by service name (a partition's `books.p3`): a partitioned
    /// worker's follow the partitions it holds.
    public var journals: [String: Journal] { openJournals.withLock { $0 } }
    private let openJournals: Mutex<[String: Journal]>
    /// The event streams of the registry the services come from, all of them: what a publisher
    /// for these services numbers and announces.
    public let eventStreams: [any PublishedStream]
    /// What the services need running while they are served: the catalog's search thread
    /// (`catalog-search`) when the host serves the catalog, none otherwise. List them before the
    /// broker or worker pool that calls the services, which a `ComponentGroup` then starts after
    /// them and asks to stop with them: the search thread finishes the search it ranks and answers
    /// the waiting ones `unavailable`, which the broker or pool sends as its last replies.
    public let components: [(name: String, component: any Component)]
    private let catalogPaths: [String]
    private let logger = Logger(component: "server")
    /// What opening one more partition's instance needs (`openPartition`).
    private let registry: ServiceRegistry
    private let resources: ServiceResources
    private let journalOptions: JournalOptions
    private let layout: PartitionLayout?

    /// Loads the catalog (`settings.catalogPaths`, or the sample catalog when empty) and makes the
    /// services `names` of `registry`, opening and replaying each journaled one's journal under
    /// `settings.dataDirectory`.
    /// - Throws: `ServiceRegistryError` for a name `registry` does not list, `PartitionLayoutError`
    ///   for a partition directory that cannot be served (or none held), `CatalogLoadError`
    ///   naming the file and JSONPath at fault, or `JournalError` (e.g. the directory is held by
    ///   another process, or the journal is damaged mid-file).
    public init(
        serving names: [String], registry: ServiceRegistry = .standard, settings: HostingSettings, journalOptions: JournalOptions? = nil
    ) throws {
        let descriptors = try names.map { name throws(ServiceRegistryError) in try registry.descriptor(named: name) }
        let options = journalOptions ?? JournalOptions(durability: settings.durability)
        let paths = try settings.catalogPaths.isEmpty ? [Self.samplePath()] : settings.catalogPaths
        let store = CatalogStore(try Catalog.load(paths: paths))
        logger.info("catalog loaded", ["files": paths.joined(separator: ","), "courses": String(store.catalog.courses.count)])
        let searches = CatalogService.makeSearchQueue()
        let resources = ServiceResources(
            catalog: store, budget: ReplyBudget(maxBytes: settings.maxReplyBytes), catalogSearches: searches,
            libraryLimits: settings.libraryLimits)
        var services: [HostedService] = []
        do {
            for descriptor in descriptors {
                for instance in try Self.instances(of: descriptor, settings: settings) {
                    var resources = resources
                    resources.partition = instance.partition
                    let opener = JournalOpener(
                        service: descriptor.name, partition: instance.partition?.partition, directory: instance.directory, options: options, logger: logger)
                    services.append(try descriptor.open(resources, opener))
                }
            }
        } catch {
            for service in services { service.journal?.close() }
            throw error
        }
        self.services = services
        self.descriptors = descriptors
        self.catalog = store
        openJournals = Mutex(Dictionary(uniqueKeysWithValues: services.compactMap { hosted in hosted.journal.map { (hosted.name, $0) } }))
        self.catalogPaths = paths
        eventStreams = registry.eventStreams
        components = names.contains(CatalogService.serviceName) ? [("catalog-search", searches)] : []
        self.registry = registry
        self.resources = resources
        self.journalOptions = options
        layout = settings.partitionScheme.map { PartitionLayout(dataDirectory: settings.dataDirectory, scheme: $0) }
    }

    /// Opens and replays one more partition's instance, one that arrived while serving (a move):
    /// its directory must hold a manifest naming exactly it. Its journal joins ``journals`` until
    /// ``close(_:)``.
    /// - Throws: `PartitionLayoutError` when this host is not partitioned or the manifest
    ///   disagrees, `ServiceRegistryError`, or `JournalError`.
    public func openPartition(of service: String, partition: Int) throws -> HostedService {
        guard let layout else { throw PartitionLayoutError(path: "", "this worker is not partitioned (setting partitions is 0)") }
        guard let owned = try layout.heldPartitions(of: service).first(where: { $0.partition == partition }) else {
            throw PartitionLayoutError(path: layout.directory(of: service, partition: partition), "is not a partition held here")
        }
        var resources = resources
        resources.partition = owned
        let directory = layout.directory(of: service, partition: partition)
        let opener = JournalOpener(service: service, partition: partition, directory: directory, options: journalOptions, logger: logger)
        let hosted = try registry.descriptor(named: service).open(resources, opener)
        if let journal = hosted.journal { openJournals.withLock { $0[hosted.name] = journal } }
        return hosted
    }

    /// Opens one replicated partition's journal as its replica store (replaying it into the
    /// service's empty state): a partition held here whose service is not served until this
    /// node leads it (``lead(_:with:)``).
    /// - Throws: `PartitionLayoutError`, `ServiceRegistryError`, or `JournalError`.
    public func openReplica(of service: String, partition: Int) throws -> PartitionReplicaStore {
        guard let layout else { throw PartitionLayoutError(path: "", "this worker is not partitioned (setting partitions is 0)") }
        let descriptor = try registry.descriptor(named: service)
        guard let emptyState = descriptor.emptyState else {
            throw PartitionLayoutError(path: layout.directory(of: service, partition: partition), "\(service) keeps no journal to replicate")
        }
        // Labelled as the partition's journal: its series stay while the node follows.
        var options = journalOptions
        options.metricDimensions = JournalOpener.metricDimensions(service: service, partition: partition)
        return try PartitionReplicaStore(directory: layout.directory(of: service, partition: partition), emptyState: emptyState, options: options)
    }

    /// Makes the service of a replicated partition this node now leads, over `store`'s replayed
    /// state, writing through `leader` (`ReplicatedChangeLog`). Its journal joins ``journals``
    /// until ``stepDown(_:)``.
    public func lead(_ store: PartitionReplicaStore, service: String, partition: Int, with leader: ReplicationLeader) throws -> HostedService {
        guard let layout else { throw PartitionLayoutError(path: "", "this worker is not partitioned (setting partitions is 0)") }
        guard let owned = try layout.heldPartitions(of: service).first(where: { $0.partition == partition }) else {
            throw PartitionLayoutError(path: layout.directory(of: service, partition: partition), "is not a partition held here")
        }
        let descriptor = try registry.descriptor(named: service)
        guard let lead = descriptor.lead else {
            throw PartitionLayoutError(path: store.directory, "\(service) keeps no journal to replicate")
        }
        var resources = resources
        resources.partition = owned
        let (journal, state) = try store.takeState()
        let hosted = try lead(resources, state, journal, leader)
        openJournals.withLock { $0[hosted.name] = journal }
        return hosted
    }

    /// Drops a leadership's service from ``journals``, leaving its journal open to its replica
    /// store (and its series in the metrics: the journal goes on taking the leader's records).
    public func stepDown(_ hosted: HostedService) {
        guard let journal = hosted.journal else { return }
        openJournals.withLock { journals in
            if journals[hosted.name] === journal { journals[hosted.name] = nil }
        }
    }

    /// Makes the instance's writes durable, unlocks its journal directory and drops it from
    /// ``journals`` and from the process's metrics: a partition that moved away, or failed to
    /// start serving.
    public func close(_ hosted: HostedService) {
        guard let journal = hosted.journal else { return }
        journal.close()
        openJournals.withLock { journals in
            if journals[hosted.name] === journal { journals[hosted.name] = nil }
        }
        if let partition = hosted.partition?.partition {
            ProcessMetrics.backend.forgetSeries(matching: JournalOpener.metricDimensions(service: hosted.service.name, partition: partition))
        }
    }

    /// The service registered as `name` (`books`, or a partition's `books.p3`), when this host serves it.
    public func service(named name: String) -> (any LearningService)? {
        services.first { $0.name == name }?.service
    }

    /// The instances of `descriptor` to open, with their journal directories: one serving every
    /// learner in `DATA/<service>/`, or with a partition scheme, for a journaled service, one per
    /// partition held in `DATA/<service>/p<N>/` (PartitionLayout).
    /// With `settings.join`, a service of which no partition is held has no instance: its
    /// directory `DATA/<service>/` is made, for partitions to move into.
    /// - Throws: `PartitionLayoutError` when a manifest disagrees, when no partition is held
    ///   without `join`, or when the directory holds the other kind of journal (partitions
    ///   without `partitions`, an unpartitioned journal with it): serving would silently leave
    ///   those learners out.
    private static func instances(
        of descriptor: ServiceDescriptor, settings: HostingSettings
    ) throws(PartitionLayoutError) -> [(partition: OwnedPartition?, directory: String)] {
        let unpartitioned = (settings.dataDirectory as NSString).appendingPathComponent(descriptor.name)
        guard descriptor.isJournaled else { return [(nil, unpartitioned)] }
        guard let scheme = settings.partitionScheme else {
            try PartitionLayout.refusePartitions(inUnpartitioned: unpartitioned)
            return [(nil, unpartitioned)]
        }
        let layout = PartitionLayout(dataDirectory: settings.dataDirectory, scheme: scheme)
        let held = try layout.heldPartitions(of: descriptor.name)
        guard !held.isEmpty else {
            guard settings.join else {
                throw PartitionLayoutError(
                    path: unpartitioned, "holds no partition of \(descriptor.name); create them with lyceum partitions init, "
                        + "or start with join (--join) to receive them in moves (lyceum partitions rebalance)")
            }
            try LayoutFiles.makeDirectories(unpartitioned)
            return []
        }
        return held.map { ($0, layout.directory(of: descriptor.name, partition: $0.partition)) }
    }

    deinit { close() }

    /// Loads the catalog files again and serves the result, once the catalog service has
    /// rendered it (on the calling thread, SIGHUP's: not on the thread serving requests); when
    /// any file is broken, logs why and keeps serving the old catalog. Returns whether the new
    /// catalog is served.
    @discardableResult
    public func reloadCatalog() -> Bool {
        let catalogServices = services.compactMap { $0.service as? CatalogService }
        do throws(CatalogLoadError) {
            let fresh = try catalog.reload(from: catalogPaths) { fresh in for service in catalogServices { service.prepare(fresh) } }
            logger.info("catalog reloaded", ["files": catalogPaths.joined(separator: ","), "courses": String(fresh.courses.count)])
            return true
        } catch {
            logger.error("catalog reload failed; the previous catalog keeps serving", ["error": error.description])
            return false
        }
    }

    /// Makes every journaled write durable and releases the data directories. Call it once no
    /// request is in progress; later writes fail with `unavailable`.
    public func close() {
        for journal in journals.values { journal.close() }
    }

    private static func samplePath() throws(CatalogLoadError) -> String {
        guard let path = Catalog.samplePath else {
            throw CatalogLoadError(
                file: "SampleCatalog", path: "$",
                message: "the sample catalog is not installed beside the executable; pass --catalog FILE")
        }
        return path
    }
}

/// Logs a replay's progress every tenth of the way, for journals of at least 8 MiB.
final class ReplayProgress {
    private let service: String
    private let logger: Logger
    private var lastTenth = -1

    init(service: String, logger: Logger) {
        self.service = service
        self.logger = logger
    }

    func report(_ progress: JournalProgress) {
        let tenth = Int(progress.fraction * 10)
        guard progress.bytesTotal >= 8 << 20, tenth != lastTenth else { return }
        lastTenth = tenth
        logger.info("replaying journal", [
            "service": service, "phase": progress.phase.rawValue, "percent": String(tenth * 10),
            "bytes": String(progress.bytesDone), "total": String(progress.bytesTotal),
        ])
    }
}
