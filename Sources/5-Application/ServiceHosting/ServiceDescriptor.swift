import Books
import Catalog
import EventSubscription
import EventPublishing
import Journal
import LearningServices
import LyceumLifecycle
import Partitions
import Replication

/// What a host gives each service it makes.
public struct ServiceResources: Sendable {
    /// The catalog being served (SIGHUP replaces what it holds).
    public let catalog: CatalogStore
    /// Where list replies are cut (`max-reply-bytes`).
    public let budget: ReplyBudget
    /// The catalog's search queue, run by its own thread (`ServiceHost.components`), so that
    /// ranking a big catalog never holds the thread that serves requests.
    public let catalogSearches: BoundedWorkQueue
    /// How much one learner's library may hold (`max-books-per-learner`, `max-library-bytes`).
    public let libraryLimits: LibraryLimits
    /// The partition the service instance holds, in a partitioned worker; `nil` when it serves
    /// every learner.
    public var partition: OwnedPartition?
}

/// One service as the registry knows it: its Majordomo name, whether it keeps a journal (and
/// the empty state its journal replays into, with the decoder serving uses), how to make it, and
/// where its durable writes' events go. `serve`, `worker`, settings, `status`, metrics and
/// `lyceum journal` all work from these; nothing else names a service.
public struct ServiceDescriptor: Sendable {
    /// The Majordomo service name, also the journal's directory under `DATA/`.
    public let name: String
    /// A fresh empty state of a journaled service, whose `apply` decodes values exactly as
    /// serving does (what `lyceum journal` checks and compacts with); `nil` when stateless.
    public let emptyState: (@Sendable () -> any JournalState)?
    /// The events of this service's durable writes, when it has any: every publisher numbers
    /// the streams of its registry, so that heartbeats announce the same numbers whichever
    /// services a process hosts.
    public let eventStream: (any PublishedStream)?
    /// Whether its events have snapshots, which a publisher answers from the table the
    /// service's state seeds: a process serving it answers snapshot requests.
    public let servesSnapshots: Bool
    /// Makes the service, replaying `journal` (opened by the host) when it is journaled.
    let open: @Sendable (ServiceResources, JournalOpener) throws -> HostedService
    /// Makes a journaled service at a replicated partition's leader: over a state its replica
    /// store replayed, writing through `ReplicatedChangeLog` on the store's journal; `nil` when stateless.
    let lead: (@Sendable (ServiceResources, _ replayed: any JournalState, Journal, ReplicationLeader) throws -> HostedService)?

    /// Whether this service's writes publish events, so a host serving it needs a publisher.
    public var publishesEvents: Bool { eventStream != nil }

    /// Whether the service keeps a journal in `DATA/<name>/`.
    public var isJournaled: Bool { emptyState != nil }

    /// A stateless service that `make` builds from the host's resources.
    public static func stateless<Service: LearningService>(
        _ name: String, make: @escaping @Sendable (ServiceResources) -> Service
    ) -> ServiceDescriptor {
        ServiceDescriptor(name: name, emptyState: nil, eventStream: nil, servesSnapshots: false, open: { resources, _ in
            HostedService(make(resources), journal: nil, capture: nil, events: nil, partition: resources.partition)
        }, lead: nil)
    }

    /// A journaled service: `state` is its empty state, `make` builds it over the replayed state
    /// and the journal as its change log; `events` (if any) publishes each durable write's event.
    public static func journaled<Service: JournaledService>(
        _ name: String, state: @escaping @Sendable () -> Service.State,
        make: @escaping @Sendable (Service.State, any ChangeLog, ServiceResources) -> Service,
        events: ServiceEvents<Service>? = nil
    ) -> ServiceDescriptor {
        ServiceDescriptor(name: name, emptyState: state, eventStream: events?.stream, servesSnapshots: events?.snapshotTable != nil, open: { resources, opener in
            var replayed = state()
            let journal = try opener.open(replaying: &replayed)
            let service = make(replayed, JournalChangeLog(journal: journal), resources)
            let capture = Self.capture(of: service, journal: journal)
            journal.enableAutomaticCompaction(capture: capture)
            return HostedService(service, journal: journal, capture: capture, events: events, partition: resources.partition)
        }, lead: { resources, replayed, journal, leader in
            guard let replayed = replayed as? Service.State else {
                throw JournalError(.invalidChange, "the replica store replayed a state of another service than \(name)")
            }
            let service = make(replayed, ReplicatedChangeLog(journal: journal, leader: leader), resources)
            // Compacted while it leads; a follower behind the snapshot is rebuilt from the
            // journal's image (protocol/replication.md, *Rebuilding a replica*). The replica
            // store takes the compaction back when the leadership ends.
            let capture = Self.capture(of: service, journal: journal)
            journal.enableAutomaticCompaction(capture: capture)
            return HostedService(service, journal: journal, capture: capture, events: events, partition: resources.partition)
        })
    }

    /// The capture of `service`'s state with `journal`'s last sequence (compactions, backups).
    private static func capture<Service: JournaledService>(of service: Service, journal: Journal) -> HostedService.Capture {
        // Unowned: the host closes the journal, which waits for a running compaction, before
        // it lets the service go.
        { [unowned journal] in
            let captured = try service.captureState { journal.lastSequence }
            return (captured.state, captured.sequence)
        }
    }
}

/// A service's events: the stream its durable writes are published on (a topic and an
/// encoder), and for a stream that snapshots serve, the table the publisher's snapshots start from.
public struct ServiceEvents<Service: LearningService>: Sendable {
    let stream: EventStream<Service.Event>
    let snapshotTable: (@Sendable (Service, CatalogStore) -> ProgressTable)?

    /// Events published on `stream`; `snapshotTable` seeds the publisher's snapshots.
    public init(
        stream: EventStream<Service.Event>, snapshotTable: (@Sendable (Service, CatalogStore) -> ProgressTable)? = nil
    ) {
        self.stream = stream
        self.snapshotTable = snapshotTable
    }
}
