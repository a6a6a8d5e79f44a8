import Catalog
import EventSubscription
import EventPublishing
import Journal
import LearningServices
import LyceumLogging
import Partitions

/// One service a host runs: the service, its journal when it keeps one, and its answer to
/// Majordomo requests, which counts each request and publishes the events of durable writes.
public struct HostedService: Sendable {
    /// The service.
    public let service: any LearningService
    /// The Majordomo service name it is registered under: the service's own, or in a
    /// partitioned worker its partition's (`books.p3`).
    public let name: String
    /// The partition it holds, in a partitioned worker.
    public let partition: OwnedPartition?
    /// Its journal, when it keeps one.
    public let journal: Journal?
    /// Reads its state and its journal's last sequence together, under the service's write
    /// lock: what a compaction and a backup snapshot. Throws when a journaled write could not
    /// be applied, which the state would miss.
    public typealias Capture = @Sendable () throws -> (state: any JournalState, sequence: UInt64)
    /// Its state's capture, when it keeps a journal.
    public let capture: Capture?
    /// The table the publisher's snapshots start from, for a service whose events have snapshots.
    let snapshotTable: (@Sendable (CatalogStore) -> ProgressTable)?
    private let makeAnswer: @Sendable (EventPublisher?, RequestMetrics) -> FrameHandler.Answer

    init<Service: LearningService>(
        _ service: Service, journal: Journal?, capture: Capture?, events: ServiceEvents<Service>?, partition: OwnedPartition?
    ) {
        self.service = service
        self.capture = capture
        name = partition.map { PartitionName.service(service.name, partition: $0.partition) } ?? service.name
        self.partition = partition
        self.journal = journal
        if let table = events?.snapshotTable {
            snapshotTable = { @Sendable catalog in table(service, catalog) }
        } else {
            snapshotTable = nil
        }
        makeAnswer = { publisher, metrics in
            var publish: (@Sendable (Service.Event, UInt64) -> Void)?
            if let publisher, let events {
                publish = { @Sendable event, revision in publisher.publish(event, on: events.stream, revision: revision) }
            }
            return Self.answer(service, publish: publish, metrics: metrics)
        }
    }

    /// The answer to request frames: `service` handles the frame; once it completes (for a write,
    /// once durable: under `always`, after the sync at the end of the caller's batch) the request is counted
    /// from what the service reports, the event of a write that changed something is published
    /// (so never for a write that failed or could still be lost), and the reply is handed over.
    func answer(publishingTo publisher: EventPublisher?, metrics: RequestMetrics) -> FrameHandler.Answer {
        makeAnswer(publisher, metrics)
    }

    private static func answer<Service: LearningService>(
        _ service: Service, publish: (@Sendable (Service.Event, UInt64) -> Void)?, metrics: RequestMetrics
    ) -> FrameHandler.Answer {
        { frame, caller, reply in
            let started = ContinuousClock.now
            service.handleWithCommit(frame, caller: caller) { handled in
                if let publish, let event = handled.event, let commit = handled.commit { publish(event, commit.sequence) }
                metrics.record(handled, service: service.name, elapsed: ContinuousClock.now - started)
                reply(handled.reply)
            }
        }
    }
}

/// Opens a journaled service's journal in `DATA/<service>/` (a partition's in
/// `DATA/<service>/p<N>/`) and replays it, for its descriptor.
struct JournalOpener {
    let service: String
    let partition: Int?
    let directory: String
    let options: JournalOptions
    let logger: Logger

    /// The labels of a journal's metrics: its service, and its partition when it has one.
    static func metricDimensions(service: String, partition: Int?) -> [(String, String)] {
        [("service", service)] + (partition.map { [("partition", String($0))] } ?? [])
    }

    /// Opens the journal and replays it into `state`, logging progress for journals large enough
    /// for a replay to take noticeable time.
    func open<State: JournalState>(replaying state: inout State) throws -> Journal {
        let started = ContinuousClock.now
        let progress = ReplayProgress(service: service, logger: logger)
        var options = options
        options.metricDimensions = Self.metricDimensions(service: service, partition: partition)
        let journal = try Journal.open(directory: directory, options: options, state: &state, progress: progress.report)
        // A partition's directory (DATA/books/p3) names it.
        logger.info("journal replayed", [
            "service": service, "directory": directory, "last_seq": String(journal.lastSequence),
            "bytes": String(journal.size), "ms": String((ContinuousClock.now - started).milliseconds),
        ])
        return journal
    }
}
