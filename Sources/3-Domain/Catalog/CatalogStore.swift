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
    /// error names the file and JSONPath at fault.
    @discardableResult
    public func reload(from paths: [String]) throws(CatalogLoadError) -> Catalog {
        let fresh = try Catalog.load(paths: paths)
        current.withLock { $0 = fresh }
        return fresh
    }
}
