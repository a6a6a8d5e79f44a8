import Synchronization

/// The catalog currently served. Readers take the current snapshot and keep using it;
/// `reload` builds a new one and swaps it in only when every file is valid.
public final class CatalogStore: Sendable {
    private let current: Mutex<Catalog>

    /// A store serving `catalog`.
    public init(_ catalog: Catalog) { current = Mutex(catalog) }

    /// The catalog to answer a request with.
    public var catalog: Catalog { current.withLock { $0 } }

    /// Loads `paths` and serves the result; on any error the old catalog keeps serving and the
    /// error names the file and JSONPath at fault. `prepare` runs on the new catalog before it
    /// is served, on the calling thread: whatever readers derive from a catalog is built there
    /// rather than by the first request after the swap.
    @discardableResult
    public func reload(from paths: [String], preparing prepare: (Catalog) -> Void = { _ in }) throws(CatalogLoadError) -> Catalog {
        let fresh = try Catalog.load(paths: paths)
        prepare(fresh)
        current.withLock { $0 = fresh }
        return fresh
    }
}
