import Books
import Catalog
import Foundation
import Journal
import LearningServices
import Logging
import LyceumSupport
import Progress

/// The learning services of one process with everything they stand on: the catalog, and for
/// each stateful service its journal in `DATA/<service>/`, replayed on start and compacted
/// automatically as it grows. `close()` (or release) makes every write durable and unlocks the
/// data directories.
public final class ServiceHost: Sendable {
    /// The services, in the order asked for.
    public let services: [any LearningService]
    /// The progress service, when this host serves it: its durable writes are what events report.
    public let progress: ProgressService?
    /// The catalog being served; `reloadCatalog()` replaces it.
    public let catalog: CatalogStore
    /// The journals, by service.
    public let journals: [ServiceName: Journal]
    private let catalogPaths: [String]
    private let logger = Logger(component: "server")

    /// Loads the catalog (`settings.catalogPaths`, or the sample catalog when empty) and opens
    /// and replays the journals of `names` under `settings.dataDirectory`.
    /// - Throws: `CatalogLoadError` naming the file and JSONPath at fault, or `JournalError`
    ///   (e.g. the directory is held by another process, or the journal is damaged mid-file).
    public init(serving names: [ServiceName], settings: Settings, journalOptions: JournalOptions? = nil) throws {
        let options = journalOptions ?? JournalOptions(durability: settings.durability)
        let paths = try settings.catalogPaths.isEmpty ? [Self.samplePath()] : settings.catalogPaths
        let store = CatalogStore(try Catalog.load(paths: paths))
        logger.info("catalog loaded", ["files": paths.joined(separator: ","), "courses": String(store.catalog.courses.count)])
        var services: [any LearningService] = []
        var journals: [ServiceName: Journal] = [:]
        var progress: ProgressService?
        let budget = ReplyBudget(maxBytes: settings.maxReplyBytes)
        do {
            for name in names {
                let directory = (settings.dataDirectory as NSString).appendingPathComponent(name.rawValue)
                switch name {
                case .catalog:
                    services.append(CatalogService(store: store, budget: budget))
                case .books:
                    var state = BooksState()
                    let journal = try Self.replay(name, directory: directory, options: options, into: &state, logger: logger)
                    journals[name] = journal
                    let service = BooksService(state: state, log: JournalChangeLog(journal: journal), budget: budget)
                    // Unowned: the host closes the journal, which waits for a running
                    // compaction, before it lets the service go.
                    journal.enableAutomaticCompaction { [unowned service, unowned journal] in
                        let captured = try service.captureState { journal.lastSequence }
                        return (captured.state, captured.sequence)
                    }
                    services.append(service)
                case .progress:
                    var state = ProgressState()
                    let journal = try Self.replay(name, directory: directory, options: options, into: &state, logger: logger)
                    journals[name] = journal
                    let service = ProgressService(state: state, catalog: store, log: JournalChangeLog(journal: journal), budget: budget)
                    journal.enableAutomaticCompaction { [unowned service, unowned journal] in
                        let captured = try service.captureState { journal.lastSequence }
                        return (captured.state, captured.sequence)
                    }
                    services.append(service)
                    progress = service
                }
            }
        } catch {
            for journal in journals.values { journal.close() }
            throw error
        }
        self.services = services
        self.progress = progress
        self.catalog = store
        self.journals = journals
        self.catalogPaths = paths
    }

    deinit { close() }

    /// Loads the catalog files again and serves the result; when any file is broken, logs why
    /// and keeps serving the old catalog. Returns whether the new catalog is served.
    @discardableResult
    public func reloadCatalog() -> Bool {
        do throws(CatalogLoadError) {
            let fresh = try catalog.reload(from: catalogPaths)
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

    /// An empty state of the stateful service `name`, whose `apply` decodes values exactly as
    /// serving does: what `lyceum journal` checks and compacts with. `nil` for a stateless service.
    public static func emptyState(of name: ServiceName) -> (any JournalState)? {
        switch name {
        case .catalog: nil
        case .books: BooksState()
        case .progress: ProgressState()
        }
    }

    /// Opens the journal in `directory` and replays it into `state`, logging progress for
    /// journals large enough for a replay to take noticeable time.
    private static func replay<State: JournalState>(
        _ name: ServiceName, directory: String, options: JournalOptions, into state: inout State, logger: Logger
    ) throws -> Journal {
        let started = ContinuousClock.now
        let progress = ReplayProgress(service: name, logger: logger)
        let journal = try Journal.open(directory: directory, options: options, state: &state, progress: progress.report)
        logger.info("journal replayed", [
            "service": name.rawValue, "directory": directory, "last_seq": String(journal.lastSequence),
            "bytes": String(journal.size), "ms": String((ContinuousClock.now - started).milliseconds),
        ])
        return journal
    }
}

/// Logs a replay's progress every tenth of the way, for journals of at least 8 MiB.
private final class ReplayProgress {
    private let service: ServiceName
    private let logger: Logger
    private var lastTenth = -1

    init(service: ServiceName, logger: Logger) {
        self.service = service
        self.logger = logger
    }

    func report(_ progress: JournalProgress) {
        let tenth = Int(progress.fraction * 10)
        guard progress.bytesTotal >= 8 << 20, tenth != lastTenth else { return }
        lastTenth = tenth
        logger.info("replaying journal", [
            "service": service.rawValue, "phase": progress.phase.rawValue, "percent": String(tenth * 10),
            "bytes": String(progress.bytesDone), "total": String(progress.bytesTotal),
        ])
    }
}
