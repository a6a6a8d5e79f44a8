import Foundation

/// An immutable catalog: the courses of one or more catalog files, with indexes for the
/// queries. Build a new one to change it; `CatalogStore` swaps them atomically.
public final class Catalog: Sendable {
    /// Courses in file order, files in the order given.
    public let courses: [Course]
    /// Categories with their course counts, by name.
    public let categories: [CategoryCount]
    private let positions: [String: Int]
    /// The positions of each category's courses, in catalog order: a page of one category is a
    /// slice of its list, not a filter of every course on each request (issue 40).
    let categoryPositions: [String: [Int]]
    let searchIndex: [SearchIndexEntry]
    /// Each course's place in (title, id) order, by catalog position: search ties compare two
    /// integers instead of two Unicode strings.
    let titleRanks: [Int]

    /// A category name and how many courses have it.
    public struct CategoryCount: Sendable, Equatable {
        /// The category as the source spells it.
        public let name: String
        /// Courses in it; at least 1.
        public let courseCount: Int
    }

    /// A catalog of `courses`, whose ids must be distinct.
    init(courses: [Course]) {
        self.courses = courses
        positions = Dictionary(courses.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        var byCategory: [String: [Int]] = [:]
        for (position, course) in courses.enumerated() {
            if let category = course.category { byCategory[category, default: []].append(position) }
        }
        categoryPositions = byCategory
        categories = byCategory.map { CategoryCount(name: $0.key, courseCount: $0.value.count) }.sorted { $0.name < $1.name }
        searchIndex = courses.map(SearchIndexEntry.init)
        var ranks = Array(repeating: 0, count: courses.count)
        for (rank, position) in courses.indices.sorted(by: { (courses[$0].title, courses[$0].id) < (courses[$1].title, courses[$1].id) }).enumerated() {
            ranks[position] = rank
        }
        titleRanks = ranks
    }

    /// The empty catalog.
    public convenience init() { self.init(courses: []) }

    /// The course `id`, if any.
    public func course(_ id: String) -> Course? { positions[id].map { courses[$0] } }

    /// Loads catalog files (or directories of `*.json` files, taken in name order); every file
    /// must be valid and course ids must be distinct across files.
    public static func load(paths: [String]) throws(CatalogLoadError) -> Catalog {
        var courses: [Course] = []
        var origins: [String: String] = [:]
        for file in try expand(paths) {
            let bytes: [UInt8]
            do {
                bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            } catch {
                throw CatalogLoadError(file: file, path: "$", message: "cannot be read: \(error.localizedDescription)")
            }
            let imported = try CatalogImporter.courses(from: bytes, file: file)
            for (index, course) in imported.enumerated() {
                if let other = origins.updateValue(file, forKey: course.id) {
                    throw CatalogLoadError(file: file, path: "$[\(index)]", message: "course id \(course.id) is also defined in \(other)")
                }
            }
            courses += imported
        }
        return Catalog(courses: courses)
    }

    /// The catalog of one in-memory document, e.g. for tests; `file` names it in errors.
    public static func parse(_ bytes: [UInt8], file: String) throws(CatalogLoadError) -> Catalog {
        Catalog(courses: try CatalogImporter.courses(from: bytes, file: file))
    }

    /// The sample catalog that ships with Lyceum: one file in each supported format.
    public static func sample() throws(CatalogLoadError) -> Catalog {
        guard let path = samplePath else {
            throw CatalogLoadError(
                file: "\(resourceBundleName)/SampleCatalog", path: "$",
                message: "is not installed next to the executable; copy the resource bundle beside it or pass catalog files")
        }
        return try load(paths: [path])
    }

    /// The directory of the sample catalog's files, or `nil` when the resource bundle is not
    /// installed. Looked up beside the executable (where SwiftPM builds and installs it) rather
    /// than through `Bundle.module`, which stops the process when the bundle is missing.
    public static var samplePath: String? {
        let places = [Bundle.main.executableURL?.deletingLastPathComponent(), Bundle.main.resourceURL, Bundle.main.bundleURL]
        for case let place? in places {
            // SwiftPM's bundle layout on Linux, then on macOS.
            for bundle in [resourceBundleName, "Lyceum_Catalog.bundle/Contents/Resources", "Lyceum_Catalog.bundle"] {
                let candidate = place.appendingPathComponent(bundle).appendingPathComponent("SampleCatalog")
                if FileManager.default.fileExists(atPath: candidate.path) { return candidate.path }
            }
        }
        return nil
    }

    private static let resourceBundleName = "Lyceum_Catalog.resources"

    private static func expand(_ paths: [String]) throws(CatalogLoadError) -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CatalogLoadError(file: path, path: "$", message: "does not exist")
            }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: path)
            } catch {
                throw CatalogLoadError(file: path, path: "$", message: "cannot be listed: \(error.localizedDescription)")
            }
            files += names.filter { $0.hasSuffix(".json") }.sorted().map { (path as NSString).appendingPathComponent($0) }
        }
        return files
    }
}
