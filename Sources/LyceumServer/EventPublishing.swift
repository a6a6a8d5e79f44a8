import Catalog
import Events
import LearningServices
import ZeroMQ

/// Where the progress service's durable writes meet the event publisher. The service hands over
/// values (the event and its journal ticket), so no socket code here reads domain JSON.
enum EventPublishing {
    /// A publisher whose progress snapshots start from the state `progress`'s journal replayed
    /// (empty without a progress service), measured against `catalog`'s lessons. It binds or
    /// connects when it runs.
    static func publisher(
        for progress: ProgressService?, catalog: CatalogStore, configuration: EventPublisherConfiguration, context: Context
    ) throws(EventsError) -> EventPublisher {
        let table = progress.map { ProgressTable(records: $0.currentState.records) { catalog.catalog.course($0)?.lessons.map(\.id) ?? [] } }
        return try EventPublisher(configuration: configuration, context: context, table: table ?? ProgressTable())
    }

    /// `progress`'s answer to a request that also publishes the event of a write that changed
    /// something. `handleWithCommit` returns only once the write is durable, so an event is
    /// never published for a write that failed or could still be lost.
    static func answer(_ progress: ProgressService, publishingTo publisher: EventPublisher) -> @Sendable ([UInt8]) -> [UInt8] {
        { frame in
            let (reply, event, commit) = progress.handleWithCommit(frame)
            if let event, let commit { publisher.publish(event, revision: commit.sequence) }
            return reply
        }
    }
}
