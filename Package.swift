// swift-tools-version: 6.0
import PackageDescription

// Data flows down this list: libzmq → Swift wrapper → Majordomo → services → journal → executable.
let package = Package(
    name: "Lyceum",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "lyceum", targets: ["lyceum"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "Majordomo", targets: ["Majordomo"]),
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
        // 7/MDP broker, worker sessions and clients; bodies are opaque frames, never parsed.
        .target(name: "Majordomo", dependencies: ["ZeroMQ"]),
        // The append-only journal: durable, checksummed, replayed on start, compacted. No sockets.
        .target(name: "Journal"),
        .executableTarget(name: "lyceum", dependencies: ["ZeroMQ", "Journal"]),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        // mdp-peer is a dependency so that `swift build --build-tests` builds the processes the
        // fault tests start; the Python peers are run by /usr/bin/python3.
        .testTarget(
            name: "MajordomoTests",
            dependencies: ["Majordomo", "ZeroMQ", "mdp-peer"],
            exclude: ["Peers"]
        ),
        // A broker or echo worker in its own process, for the fault tests to kill and restart.
        .executableTarget(name: "mdp-peer", dependencies: ["Majordomo"], path: "Tests/MajordomoPeer"),

        // Benchmarks are executables, never timed tests: `make bench-zmq` runs this one.
        .executableTarget(
            name: "zmq-throughput",
            dependencies: ["ZeroMQ"],
            path: "Benchmarks/ZeroMQThroughput",
            exclude: ["pushpull.c"]
        ),
        // `make bench-mdp`: echo round trips through Lyceum's broker.
        .executableTarget(
            name: "mdp-bench",
            dependencies: ["Majordomo", "ZeroMQ"],
            path: "Benchmarks/MajordomoEcho"
        ),
    ],
    swiftLanguageModes: [.v6]
)
