import Catalog
import JSON
import Synchronization

/// The serialized forms of one catalog's courses, computed once per catalog snapshot so that
/// catalog reads copy bytes instead of re-encoding the same courses on every request.
final class CatalogRendering: Sendable {
    let catalog: Catalog
    private let summaries: [String: [UInt8]]
    private let details: [String: [UInt8]]
    let categories: [UInt8]

    init(_ catalog: Catalog) {
        self.catalog = catalog
        summaries = Dictionary(catalog.courses.map { ($0.id, $0.summaryJSON.serialized()) }, uniquingKeysWith: { first, _ in first })
        details = Dictionary(catalog.courses.map { ($0.id, $0.detailJSON.serialized()) }, uniquingKeysWith: { first, _ in first })
        let categoryList: JSONValue = .array(catalog.categories.map { ["name": .string($0.name), "course_count": .integer($0.courseCount)] })
        categories = categoryList.serialized()
    }

    /// Appends the summary of `course` to `output`.
    func writeSummary(of course: Course, to output: inout [UInt8]) {
        if let bytes = summaries[course.id] { output.append(contentsOf: bytes) } else { course.summaryJSON.write(to: &output) }
    }

    /// The serialized detail (with lessons) of `course`.
    func detail(of course: Course) -> [UInt8] { details[course.id] ?? course.detailJSON.serialized() }
}

/// Keeps the rendering of the catalog that `store` serves, and of the one a reload is about to
/// serve (`prepare`): a big catalog's rendering takes seconds (1.8 s for a 64 MiB file), which
/// the thread reloading it pays instead of the first request after the swap.
final class CatalogRenderingCache: Sendable {
    private let store: CatalogStore
    /// Oldest first, at most two: the served catalog's and a prepared one's.
    private let renderings: Mutex<[CatalogRendering]> = Mutex([])

    init(store: CatalogStore) { self.store = store }

    /// The rendering of the catalog being served now; built here only for a catalog nobody
    /// prepared (the first, or one swapped in without `prepare`).
    var rendering: CatalogRendering {
        let catalog = store.catalog
        return renderings.withLock { renderings in
            if let index = renderings.firstIndex(where: { $0.catalog === catalog }) {
                let found = renderings[index]
                // Served now: any older rendering will not be asked for again.
                if index > 0 { renderings.removeFirst(index) }
                return found
            }
            let fresh = CatalogRendering(catalog)
            renderings = [fresh]
            return fresh
        }
    }

    /// Builds the rendering of `catalog`, before it is served, without holding requests meanwhile.
    func prepare(_ catalog: Catalog) {
        let fresh = CatalogRendering(catalog)
        renderings.withLock { renderings in
            renderings = Array((renderings.filter { $0.catalog !== catalog } + [fresh]).suffix(2))
        }
    }
}
