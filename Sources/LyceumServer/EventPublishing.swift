import Catalog
import Events
import LearningServices
import ZeroMQ

/// Where the progress and books services' durable writes meet the event publisher. The service hands over
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

    /// A service's answer to a request that also publishes the event of a write that changed
    /// something: `handleWithCommit` (progress's or books's) completes only once the write is
    /// durable (on the journal's acknowledger thread under `always`), so an event is never
    /// published for a write that failed or could still be lost, and nothing waits for the sync
    /// meanwhile; `publish` is the publisher's method for that service's events.
    static func answer<Event>(
        _ handleWithCommit: @escaping @Sendable ([UInt8], @escaping @Sendable (HandledRequest<Event>) -> Void) -> Void,
        publish: @escaping @Sendable (Event, UInt64) -> Void
    ) -> FrameHandler.Answer {
        { frame, reply in
            handleWithCommit(frame) { handled in
                if let event = handled.event, let commit = handled.commit { publish(event, commit.sequence) }
                reply(handled.reply)
            }
        }
    }
}
