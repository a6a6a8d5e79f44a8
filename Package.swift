// swift-tools-version: 6.0
import PackageDescription

// Data flows down this list: libzmq → Swift wrapper → Majordomo → services → journal → executable.
let package = Package(
    name: "Lyceum",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "lyceum", targets: ["lyceum"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
    ],
    targets: [
        // libzmq from Debian's libzmq3-dev: a module map and a shim header, nothing else.
        .systemLibrary(
            name: "CZMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        // The only module that imports CZMQ.
        .target(name: "ZeroMQ", dependencies: ["CZMQ"]),
        // The append-only journal: durable, checksummed, replayed on start, compacted. No sockets.
        .target(name: "Journal"),
        .executableTarget(name: "lyceum", dependencies: ["ZeroMQ", "Journal"]),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),

        // The learning services' domain: JSON of our own, catalog, books, progress, and the
        // request envelope that the Majordomo workers call. No sockets below this line.
        .target(name: "JSON"),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .target(name: "Catalog", dependencies: ["JSON"], resources: [.copy("SampleCatalog")]),
        .testTarget(name: "CatalogTests", dependencies: ["Catalog", "JSON"]),
        .target(name: "Books", dependencies: ["JSON", "Journal"]),
        .testTarget(name: "BooksTests", dependencies: ["Books", "JSON", "Journal"]),
        .target(name: "Progress", dependencies: ["JSON", "Journal", "Catalog"]),
        .testTarget(name: "ProgressTests", dependencies: ["Progress", "Catalog", "JSON", "Journal"]),
        .target(name: "LearningServices", dependencies: ["JSON", "Journal", "Catalog", "Books", "Progress"]),
        .testTarget(name: "LearningServicesTests", dependencies: ["LearningServices", "JSON", "Journal", "Catalog", "Books", "Progress"]),

        // Benchmarks are executables, never timed tests: `make bench-zmq` runs this one.
        .executableTarget(
            name: "zmq-throughput",
            dependencies: ["ZeroMQ"],
            path: "Benchmarks/ZeroMQThroughput",
            exclude: ["pushpull.c"]
        ),
        // `swift run -c release service-handling`: per-request cost of the services, and replay speed.
        .executableTarget(
            name: "service-handling",
            dependencies: ["LearningServices", "Books", "Catalog", "JSON", "Journal"],
            path: "Benchmarks/ServiceHandling"
        ),
    ],
    swiftLanguageModes: [.v6]
)
