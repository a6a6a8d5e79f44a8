import Catalog
import Events
import LearningServices
import ZeroMQ

/// Where the progress service's durable writes meet the event publisher. The service hands over
/// values (the event and its journal ticket), so no socket code here reads domain JSON.
enum EventPublishing {
    /// A publisher for `progress` whose snapshots start from the state the journal replayed,
    /// measured against `catalog`'s lessons. It binds or connects when it runs.
    static func publisher(
        for progress: ProgressService, catalog: CatalogStore, configuration: EventPublisherConfiguration, context: Context
    ) throws(EventsError) -> EventPublisher {
        let table = ProgressTable(records: progress.currentState.records) { catalog.catalog.course($0)?.lessons.map(\.id) ?? [] }
        return try EventPublisher(configuration: configuration, context: context, table: table)
    }

    /// `progress`'s answer to a request that also publishes the event of a write that changed
    /// something. `handleWithCommit` completes only once the write is durable (on the journal's
    /// acknowledger thread under `always`), so an event is never published for a write that
    /// failed or could still be lost, and nothing waits for the sync meanwhile.
    static func answer(_ progress: ProgressService, publishingTo publisher: EventPublisher) -> FrameHandler.Answer {
        { frame, reply in
            progress.handleWithCommit(frame) { handled in
                if let event = handled.event, let commit = handled.commit { publisher.publish(event, revision: commit.sequence) }
                reply(handled.reply)
            }
        }
    }
}
