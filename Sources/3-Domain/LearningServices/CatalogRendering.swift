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

/// Keeps the rendering of the catalog that `store` serves, rebuilding it after a reload.
final class CatalogRenderingCache: Sendable {
    private let store: CatalogStore
    private let current: Mutex<CatalogRendering?> = Mutex(nil)

    init(store: CatalogStore) { self.store = store }

    /// The rendering of the catalog being served now.
    var rendering: CatalogRendering {
        let catalog = store.catalog
        return current.withLock { cached in
            if let rendering = cached, rendering.catalog === catalog { return rendering }
            let fresh = CatalogRendering(catalog)
            cached = fresh
            return fresh
        }
    }
}
