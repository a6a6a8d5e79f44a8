import Catalog
import EventSubscription
import EventPublishing
import Majordomo
import ZeroMQ

// What `serve` and `worker` both make of a host: one handler per service instance, and one
// publisher of the instances' events. Both commands (and the partitions that move into a worker)
// take them from here, so that a request is answered, counted and published the same way in
// every process.
extension ServiceHost {
    /// Makes the Majordomo handler of an instance of this host (for a broker's `LocalService` or
    /// a `WorkerPool`): its answer behind the one-frame `FrameHandler`, counted in one
    /// `RequestMetrics` shared by every handler it makes, and publishing the events of durable
    /// writes to `publisher` when there is one.
    public static func handlers(publishingTo publisher: EventPublisher?) -> @Sendable (HostedService) -> WorkerPool.Handler {
        let metrics = RequestMetrics()
        return { hosted in FrameHandler.handler(hosted.answer(publishingTo: publisher, metrics: metrics)) }
    }

    /// The publisher of the events of this host's services, when one of them has events (one for
    /// all of a partitioned worker's partitions, also when none is held yet: those that move in
    /// publish through it); `nil` otherwise. Its snapshots start from the tables of the instances
    /// whose events have snapshots, merged (an empty one without). It binds when it runs.
    public func eventPublisher(configuration: EventPublisherConfiguration, context: Context) throws(EventsError) -> EventPublisher? {
        guard descriptors.contains(where: \.publishesEvents) else { return nil }
        var table = ProgressTable()
        for snapshotTable in services.compactMap(\.snapshotTable) { table.merge(snapshotTable(catalog)) }
        return try EventPublisher(configuration: configuration, context: context, streams: eventStreams, table: table)
    }

    /// Makes the progress snapshots of `publisher` follow an instance that started (`served`) or
    /// stopped being served after the start (a partition moving in or out): its learners'
    /// entries join them, or leave them, so that a snapshot covers exactly what is served.
    public func snapshotsFollow(_ hosted: HostedService, served: Bool, publisher: EventPublisher) {
        guard let snapshotTable = hosted.snapshotTable else { return }
        let table = snapshotTable(catalog)
        if served { publisher.addSnapshotEntries(table) } else { publisher.removeSnapshotLearners(of: table) }
    }
}
