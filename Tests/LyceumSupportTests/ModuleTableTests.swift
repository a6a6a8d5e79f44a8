import Foundation
import Testing

/// docs/ARCHITECTURE.md's module table is the one list of Lyceum's modules: these tests hold it to
/// `Package.swift`, so that neither can change without the other.
@Suite struct ModuleTableTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyModuleHasItsRowAndEveryRowIsAModule() throws {
        let manifest = try String(contentsOf: Self.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let architecture = try String(contentsOf: Self.repository.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let modules = Self.sourceModules(inManifest: manifest)
        let rows = try Self.moduleNames(inTableOf: architecture)
        // Guards the parsers themselves: a manifest or table they no longer understand would
        // otherwise compare two empty sets.
        #expect(modules.contains("Majordomo") && modules.contains("lyceum") && modules.count > 10)
        #expect(rows.contains("Majordomo"))
        #expect(modules.subtracting(rows).isEmpty, "modules without a row in docs/ARCHITECTURE.md: \(modules.subtracting(rows).sorted())")
        #expect(rows.subtracting(modules).isEmpty, "rows in docs/ARCHITECTURE.md naming no module of Package.swift: \(rows.subtracting(modules).sorted())")
    }

    @Test func readsTargetsWhoseDeclarationSpansLines() {
        let manifest = """
            .systemLibrary(
                name: "CZMQ", path: "Sources/1-Transport/CZMQ",
                pkgConfig: "libzmq"
            ),
            .target(name: "Books", dependencies: ["JSON"], path: "Sources/3-Domain/Books"),
            .testTarget(name: "BooksTests", dependencies: ["Books"]),
            .executableTarget(name: "journal-stress", dependencies: ["Journal"], path: "Tests/JournalStress"),
            .executableTarget(
                name: "lyceum",
                path: "Sources/5-Application/lyceum"
            ),
            """
        #expect(Self.sourceModules(inManifest: manifest) == ["CZMQ", "Books", "lyceum"])
    }

    @Test func readsEveryNameOfARow() throws {
        let document = """
            ## Modules and what each may import

            | module | what it is | may import | never |
            |---|---|---|---|
            | `Books`, `Progress` | values | `JSON` | sockets |
            | `lyceum` | the executable | `LyceumServer` | logic |

            | other table | x |
            |---|---|
            | `NotAModule` | x |
            """
        #expect(try Self.moduleNames(inTableOf: document) == ["Books", "Progress", "lyceum"])
    }

    /// The targets of the manifest whose `path:` is under `Sources/`: Lyceum's modules. Test
    /// targets, the test support library, benchmarks and examples live elsewhere.
    static func sourceModules(inManifest manifest: String) -> Set<String> {
        Set(sourceModuleDeclarations(inManifest: manifest).map(\.name))
    }

    /// Each module of the manifest (a target whose `path:` is under `Sources/`) with its path and
    /// the targets its `dependencies:` name.
    static func sourceModuleDeclarations(inManifest manifest: String) -> [(name: String, path: String, dependencies: [String])] {
        let kinds = [".target(", ".executableTarget(", ".systemLibrary(", ".testTarget(", ".binaryTarget(", ".plugin(", ".macro("]
        var declarations: [Substring] = []
        var rest = manifest[...]
        while let start = kinds.compactMap({ rest.range(of: $0) }).min(by: { $0.lowerBound < $1.lowerBound }) {
            let after = rest[start.upperBound...]
            let next = kinds.compactMap { after.range(of: $0)?.lowerBound }.min() ?? after.endIndex
            declarations.append(after[..<next])
            rest = after[next...]
        }
        return declarations.compactMap { declaration in
            guard let path = quoted(after: "path:", in: declaration), path.hasPrefix("Sources/"),
                  let name = quoted(after: "name:", in: declaration) else { return nil }
            return (name, path, dependencies(in: declaration))
        }
    }

    /// The quoted names in the `dependencies: [...]` list of one target's declaration.
    private static func dependencies(in declaration: Substring) -> [String] {
        guard let label = declaration.range(of: "dependencies:"),
              let open = declaration[label.upperBound...].firstIndex(of: "["),
              let close = declaration[open...].firstIndex(of: "]") else { return [] }
        let pieces = declaration[declaration.index(after: open)..<close].split(separator: "\"", omittingEmptySubsequences: false)
        return pieces.enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The names in backticks in the first column of the first table under the heading
    /// "## Modules and what each may import".
    static func moduleNames(inTableOf document: String) throws -> Set<String> {
        let section = try #require(document.range(of: "## Modules and what each may import"))
        let lines = document[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
        let table = lines.drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.dropFirst(2)
        var names: Set<String> = []
        for row in table {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count > 1 else { continue }
            let pieces = cells[1].split(separator: "`", omittingEmptySubsequences: false)
            // Between backticks: every odd piece.
            for (index, piece) in pieces.enumerated() where index % 2 == 1 { names.insert(String(piece)) }
        }
        return names
    }

    static func quoted(after label: String, in text: Substring) -> String? {
        guard let labelRange = text.range(of: label) else { return nil }
        let afterLabel = text[labelRange.upperBound...]
        guard let open = afterLabel.firstIndex(of: "\"") else { return nil }
        let value = afterLabel[afterLabel.index(after: open)...]
        guard let close = value.firstIndex(of: "\"") else { return nil }
        return String(value[..<close])
    }
}

/// The layers of `Sources/` (`0-Support` … `5-Application`) say what may import what: a module
/// imports only modules of its own layer or of a lower one. These tests hold `Package.swift`'s
/// dependencies to the layer folders of the targets' paths.
@Suite struct LayerTests {
    @Test func everyModuleImportsOnlyItsOwnLayerOrLowerOnes() throws {
        let manifest = try String(contentsOf: ModuleTableTests.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let modules = ModuleTableTests.sourceModuleDeclarations(inManifest: manifest)
        #expect(modules.count > 10 && modules.contains { $0.name == "Journal" && !$0.dependencies.isEmpty })
        #expect(Self.violations(modules).isEmpty, "modules importing from a higher layer: \(Self.violations(modules))")
    }

    @Test func findsAnImportFromAHigherLayer() {
        let manifest = """
            .target(name: "JSON", path: "Sources/0-Support/JSON"),
            .target(name: "Journal", dependencies: ["JSON", "Glibc"], path: "Sources/2-Storage/Journal"),
            .target(name: "Books", dependencies: ["JSON", "Journal"], path: "Sources/3-Domain/Books"),
            .target(name: "Wrong", dependencies: ["Books"], path: "Sources/1-Transport/Wrong"),
            """
        #expect(Self.violations(ModuleTableTests.sourceModuleDeclarations(inManifest: manifest))
                == ["Wrong (1-Transport) imports Books (3-Domain)"])
    }

    /// `A (layer) imports B (higher layer)` for every dependency between modules that goes up;
    /// dependencies that are not modules (the toolchain's, test support) are not layered.
    static func violations(_ modules: [(name: String, path: String, dependencies: [String])]) -> [String] {
        let layers = Dictionary(modules.map { ($0.name, layer(of: $0.path)) }, uniquingKeysWith: { first, _ in first })
        return modules.flatMap { module in
            module.dependencies.compactMap { dependency -> String? in
                guard let used = layers[dependency], used > layer(of: module.path) else { return nil }
                return "\(module.name) (\(layer(of: module.path))) imports \(dependency) (\(used))"
            }
        }.sorted()
    }

    /// `3-Domain` for `Sources/3-Domain/Books`: the folder's number orders the layers.
    private static func layer(of path: String) -> String {
        String(path.split(separator: "/").dropFirst().first ?? "")
    }
}

/// The diagram above docs/ARCHITECTURE.md's module table draws every module, and each of its
/// arrows `A ─▶ B` is a dependency of `Package.swift` (B imports A, directly or through others).
@Suite struct ModuleDiagramTests {
    @Test func everyArrowIsADependencyAndEveryModuleIsDrawn() throws {
        let manifest = try String(contentsOf: ModuleTableTests.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let architecture = try String(contentsOf: ModuleTableTests.repository.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let modules = ModuleTableTests.sourceModuleDeclarations(inManifest: manifest)
        let diagram = try Self.diagram(in: architecture)
        let arrows = Self.arrows(in: diagram, modules: Set(modules.map(\.name)))
        // Guards the parser: a diagram it no longer reads would check nothing.
        #expect(arrows.count > 10 && arrows.contains { $0 == ("CZMQ", "ZeroMQ") })
        #expect(Self.falseArrows(arrows, modules).isEmpty, "arrows of the diagram that are no dependency: \(Self.falseArrows(arrows, modules))")
        let drawn = Self.words(diagram)
        let undrawn = modules.map(\.name).filter { !drawn.contains($0) }.sorted()
        #expect(undrawn.isEmpty, "modules the diagram does not draw: \(undrawn)")
    }

    @Test func findsAnArrowThatIsNoDependency() {
        let manifest = """
            .target(name: "Catalog", dependencies: ["JSON"], path: "Sources/3-Domain/Catalog"),
            .target(name: "Books", dependencies: ["JSON"], path: "Sources/3-Domain/Books"),
            .target(name: "Progress", dependencies: ["Catalog"], path: "Sources/3-Domain/Progress"),
            .target(name: "LearningServices", dependencies: ["Progress"], path: "Sources/3-Domain/LearningServices"),
            """
        let modules = ModuleTableTests.sourceModuleDeclarations(inManifest: manifest)
        let arrows = Self.arrows(in: "3-Domain:  Catalog ─▶ Books, Progress (their records) ─▶ LearningServices ──┤", modules: Set(modules.map(\.name)))
        #expect(arrows.map { "\($0.from)→\($0.to)" } == ["Catalog→Books", "Catalog→Progress", "Books→LearningServices", "Progress→LearningServices"])
        #expect(Self.falseArrows(arrows, modules).map { "\($0.from)→\($0.to)" } == ["Catalog→Books", "Books→LearningServices"])
    }

    /// The first code block under "## Modules and what each may import".
    static func diagram(in document: String) throws -> String {
        let section = try #require(document.range(of: "## Modules and what each may import"))
        let start = try #require(document[section.upperBound...].range(of: "```\n"))
        let end = try #require(document[start.upperBound...].range(of: "```"))
        return String(document[start.upperBound..<end.lowerBound])
    }

    /// Each arrow `A ─▶ B` of `diagram` between module names (parenthesised remarks aside): on a
    /// line `A, B ─▶ C ─▶ D`, A→C, B→C and C→D.
    static func arrows(in diagram: String, modules: Set<String>) -> [(from: String, to: String)] {
        var arrows: [(from: String, to: String)] = []
        for line in diagram.split(separator: "\n") {
            var depth = 0
            let text = String(line.compactMap { character -> Character? in
                if character == "(" { depth += 1 }
                defer { if character == ")" { depth -= 1 } }
                return depth > 0 || character == ")" ? nil : character
            })
            // `;` ends a chain: `A ─▶ B; C ─▶ D` has no arrow B→C.
            for chain in text.split(separator: ";") {
                let segments = chain.components(separatedBy: "─▶").map { words(String($0)).filter(modules.contains) }
                for (from, to) in zip(segments, segments.dropFirst()) {
                    for source in from { for target in to { arrows.append((source, target)) } }
                }
            }
        }
        return arrows
    }

    /// The arrows whose target does not import their source, directly or through other modules.
    static func falseArrows(_ arrows: [(from: String, to: String)], _ modules: [(name: String, path: String, dependencies: [String])]) -> [(from: String, to: String)] {
        let direct = Dictionary(modules.map { ($0.name, Set($0.dependencies)) }, uniquingKeysWith: { $0.union($1) })
        func imports(_ module: String, _ wanted: String, _ seen: inout Set<String>) -> Bool {
            guard seen.insert(module).inserted else { return false }
            let dependencies = direct[module] ?? []
            return dependencies.contains(wanted) || dependencies.contains { imports($0, wanted, &seen) }
        }
        return arrows.filter { arrow in
            var seen: Set<String> = []
            return !imports(arrow.to, arrow.from, &seen)
        }
    }

    /// The identifiers of `text` (letters, digits and `-`).
    static func words(_ text: String) -> [String] {
        text.split { !($0.isLetter || $0.isNumber || $0 == "-") }.map(String.init)
    }
}
