import EventSubscription
import EventPublishing
import LearningServices

// Lyceum's own services: the one place that lists them. A new service adds its descriptor here
// (see docs/ARCHITECTURE.md, "Adding a service").
extension ServiceRegistry {
    /// `catalog`, `progress` and `books`.
    public static let standard = ServiceRegistry([.catalog, .progress, .books])
}

extension ServiceDescriptor {
    /// The read-only course catalog, ranking searches on the host's search thread.
    static let catalog = ServiceDescriptor.stateless(CatalogService.serviceName) { resources in
        CatalogService(store: resources.catalog, budget: resources.budget, searches: resources.catalogSearches)
    }

    /// Learners' progress through courses, journaled in `DATA/progress`; its events have
    /// snapshots, seeded from the replayed state measured against the catalog's lessons.
    static let progress = ServiceDescriptor.journaled(
        ProgressService.serviceName, state: { ProgressState() },
        make: { state, log, resources in ProgressService(state: state, catalog: resources.catalog, log: log, budget: resources.budget, partition: resources.partition) },
        events: ServiceEvents(
            stream: .progress,
            snapshotTable: { service, catalog in
                ProgressTable(records: service.currentState.records) { catalog.catalog.course($0)?.lessons.map(\.id) ?? [] }
            }))

    /// Learners' book libraries, journaled in `DATA/books`.
    static let books = ServiceDescriptor.journaled(
        BooksService.serviceName, state: { BooksState() },
        make: { state, log, resources in BooksService(
                state: state, log: log, budget: resources.budget, partition: resources.partition, limits: resources.libraryLimits) },
        events: ServiceEvents(stream: .books))
}
