// swift-tools-version: 6.0
import PackageDescription

// Each target's path names its layer (Sources/0-Support … 5-Application); a module depends only on
// its own layer and lower ones (LayerTests checks it; docs/ARCHITECTURE.md draws the graph).
let package = Package(
    name: "Lyceum",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "lyceum", targets: ["lyceum"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "Majordomo", targets: ["Majordomo"]),
        .library(name: "LyceumClient", targets: ["LyceumClient"]),
    ],
    targets: [
        // libzmq from Debian's libzmq3-dev: a module map and a shim header, nothing else.
        .systemLibrary(
            name: "CZMQ", path: "Sources/1-Transport/CZMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        // What several modules need and the toolchain alone provides: duration counts, RFC 3339
        // time, JSON string escaping, waiting for a server's bound endpoints. Named so that it
        // can never collide with a package's module.
        .target(name: "LyceumSupport", path: "Sources/0-Support/LyceumSupport"),
        .testTarget(name: "LyceumSupportTests", dependencies: ["LyceumSupport"]),
        // Roles, permissions and callers: who may do what, decided once for every layer. Pure Swift.
        .target(name: "Access", path: "Sources/0-Support/Access"),
        .testTarget(name: "AccessTests", dependencies: ["Access"]),
        // The only module that imports CZMQ.
        .target(name: "ZeroMQ", dependencies: ["CZMQ", "DurableFiles", "LyceumSupport"], path: "Sources/1-Transport/ZeroMQ"),
        // Structured, levelled logs to stderr, shared by every module.
        .target(name: "LyceumLogging", dependencies: ["LyceumSupport"], path: "Sources/0-Support/LyceumLogging"),
        // The metrics façade, shaped like swift-metrics, and its Prometheus backend: subsystems push.
        .target(name: "Telemetry", dependencies: ["LyceumSupport"], path: "Sources/0-Support/Telemetry"),
        // The Prometheus exposition read back by prometheus_client (Clients/, run by /usr/bin/python3).
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry", "LyceumTestSupport"], exclude: ["Clients"]),
        // The Component protocol and the one owner of signals and orderly shutdown.
        .target(name: "LyceumLifecycle", dependencies: ["LyceumLogging", "LyceumSupport"], path: "Sources/0-Support/LyceumLifecycle"),
        // Who may connect: zcert certificates as Lyceum authorises them (KeyRing), the ZAP handler
        // and its decision (Authenticator).
        .target(name: "Security", dependencies: ["ZeroMQ", "Access", "LyceumLogging", "LyceumLifecycle", "LyceumSupport"], path: "Sources/1-Transport/Security"),
        // Real certificate files, and libczmq's zcert and pyzmq reading and writing them (Helpers/).
        .testTarget(name: "SecurityTests", dependencies: ["Security", "ZeroMQ", "Access", "LyceumLogging", "LyceumTestSupport"], exclude: ["Helpers"]),
        // A small HTTP/1.1 server for a process's own endpoints: one thread, one poll() loop,
        // bounded connections and streams (Server-Sent Events). Generic: it knows no Lyceum service.
        .target(name: "HTTPServer", dependencies: ["LyceumLogging", "LyceumLifecycle", "LyceumSupport"], path: "Sources/1-Transport/HTTPServer"),
        // Real loopback sockets fed what broken or hostile peers send: bad request lines, oversized
        // headers, slow peers, more connections than the limit.
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "LyceumLifecycle", "LyceumTestSupport"]),
        // etcd v3's JSON gateway over HTTP/1.1 on POSIX sockets (leases, keys, transactions,
        // watches; bounded in time and bytes) and the leadership of a key built on it: lease-bound
        // leader keys whose create revision is the epoch. No gRPC library, no domain type.
        .target(name: "Coordination", dependencies: ["JSON", "LyceumLogging", "LyceumSupport"], path: "Sources/1-Transport/Coordination"),
        // Against a real etcd the tests start (Debian's etcd-server), and hostile fake gateways.
        .testTarget(name: "CoordinationTests", dependencies: ["Coordination", "LyceumTestSupport"]),
        // 7/MDP broker, worker sessions and clients; bodies are opaque frames, never parsed.
        .target(name: "Majordomo", dependencies: ["ZeroMQ", "Access", "LyceumLogging", "LyceumLifecycle", "Telemetry", "LyceumSupport"], path: "Sources/1-Transport/Majordomo"),
        // The append-only journal: durable, checksummed, replayed on start, compacted. No sockets.
        .target(name: "Journal", dependencies: ["DurableFiles", "LyceumLogging", "LyceumLifecycle", "Telemetry", "JSON", "LyceumSupport"], path: "Sources/2-Storage/Journal"),
        // A partition's records from its leader to its followers: epoch histories, the
        // replication channel's messages and its two ends (ZeroMQ), the majority count.
        .target(name: "Replication", dependencies: ["DurableFiles", "Journal", "JSON", "ZeroMQ", "LyceumLogging", "LyceumLifecycle", "LyceumSupport", "Telemetry"], path: "Sources/2-Storage/Replication"),
        .testTarget(name: "ReplicationTests", dependencies: ["Replication", "DurableFiles", "Coordination", "Journal", "ZeroMQ", "Security", "Access", "LyceumLifecycle", "LyceumTestSupport", "ServiceHosting", "LearningServices", "PartitionOperations"]),
        // Only parses and dispatches: every subcommand is declared and run by a library module.
        .executableTarget(name: "lyceum", dependencies: ["CommandSyntax", "LyceumServer", "LyceumLifecycle", "LoadTest", "ProgressWatch"], path: "Sources/5-Application/lyceum"),
        // The one command-line parser: commands declare their options once; parsing, errors and --help come from that.
        .target(name: "CommandSyntax", path: "Sources/0-Support/CommandSyntax"),
        .testTarget(name: "CommandSyntaxTests", dependencies: ["CommandSyntax"]),

        // Utilities the test targets share: threads, processes (ChildProcess, LyceumProcess), free
        // endpoints, waiting for a server (waitUntilServing), a power-loss filesystem's mount.
        .target(name: "LyceumTestSupport", dependencies: ["LyceumSupport", "Access", "Majordomo", "ZeroMQ"], path: "Tests/LyceumTestSupport", exclude: ["Clients"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "LyceumTestSupport"]),
        .testTarget(name: "LyceumLoggingTests", dependencies: ["LyceumLogging"]),
        // Every fsync and fdatasync of the project, under one policy: a failed sync is final
        // (never retried, never acknowledged), and the process's way out when it cannot go on.
        // In the support layer because ZeroMQ's certificate files are made durable through it too.
        .target(name: "DurableFiles", dependencies: ["LyceumLogging"], path: "Sources/0-Support/DurableFiles"),
        .testTarget(name: "DurableFilesTests", dependencies: ["DurableFiles"]),
        .testTarget(name: "LyceumLifecycleTests", dependencies: ["LyceumLifecycle", "LyceumTestSupport"]),
        // JournalTests runs journal-stress as a child process to kill it; the dependency builds it.
        .testTarget(name: "JournalTests", dependencies: ["Journal", "DurableFiles", "journal-stress", "LyceumLifecycle", "LyceumSupport", "LyceumTestSupport"]),
        .executableTarget(name: "journal-stress", dependencies: ["Journal", "LyceumSupport"], path: "Tests/JournalStress"),
        // mdp-peer is a dependency so that `swift build --build-tests` builds the processes the
        // fault tests start; the Python peers are run by /usr/bin/python3.
        .testTarget(
            name: "MajordomoTests",
            dependencies: ["Majordomo", "ZeroMQ", "Access", "Security", "LyceumLifecycle", "LyceumLogging", "LyceumTestSupport", "mdp-peer"],
            exclude: ["Peers"]
        ),
        // A broker or echo worker in its own process, for the fault tests to kill and restart.
        .executableTarget(name: "mdp-peer", dependencies: ["Majordomo", "LyceumLifecycle"], path: "Tests/MajordomoPeer"),

        // Lyceum's own JSON values, parser and writer (0-Support: the journal and the transport's
        // gateways use it too). Then the learning services' domain (3-Domain): catalog, books,
        // progress, and the request envelope that the Majordomo workers call. No sockets below this line.
        .target(name: "JSON", dependencies: ["LyceumLogging", "LyceumSupport"], path: "Sources/0-Support/JSON"),
        .testTarget(name: "JSONTests", dependencies: ["JSON", "LyceumSupport"]),
        .target(name: "Catalog", dependencies: ["JSON"], path: "Sources/3-Domain/Catalog", resources: [.copy("SampleCatalog")]),
        .testTarget(name: "CatalogTests", dependencies: ["Catalog", "JSON"]),
        .target(name: "Books", dependencies: ["JSON", "Journal", "LyceumLogging", "LyceumSupport"], path: "Sources/3-Domain/Books"),
        .testTarget(name: "BooksTests", dependencies: ["Books", "JSON", "Journal", "LyceumSupport"]),
        .target(name: "Progress", dependencies: ["JSON", "Journal", "Catalog", "LyceumLogging", "LyceumSupport"], path: "Sources/3-Domain/Progress"),
        .testTarget(name: "ProgressTests", dependencies: ["Progress", "Catalog", "JSON", "Journal"]),
        // How learners are spread over partitions, and where each partition lives on disk
        // (DATA/<service>/p<N>/ and its manifest); the pure plans over nodes' holdings.
        .target(name: "Partitions", dependencies: ["DurableFiles", "JSON"], path: "Sources/3-Domain/Partitions"),
        .testTarget(name: "PartitionsTests", dependencies: ["Partitions", "JSON"]),
        .target(name: "LearningServices", dependencies: ["JSON", "Journal", "Access", "Catalog", "Books", "Progress", "Partitions", "LyceumLifecycle", "LyceumLogging", "LyceumSupport"], path: "Sources/3-Domain/LearningServices"),
        // Test doubles of the services' boundaries (InMemoryChangeLog) and a generated big catalog
        // (BigCatalog), for the test targets and benchmarks only: production code never links them.
        .target(name: "LearningServicesTestSupport", dependencies: ["LearningServices", "Journal", "Catalog", "LyceumSupport"], path: "Tests/LearningServicesTestSupport"),
        .testTarget(name: "LearningServicesTests", dependencies: ["LearningServicesTestSupport", "LearningServices", "Access", "JSON", "Journal", "Catalog", "Books", "Progress", "Partitions", "LyceumLifecycle", "LyceumTestSupport"]),
        // The events as a subscriber sees them, and nothing of the server: topics, the snapshot
        // protocol's frames, received events, snapshots and heartbeats, course titles and figures,
        // and the gap-repairing ProgressSubscriber that `lyceum watch`, the dashboard and
        // LyceumClient use. No domain or storage module.
        .target(name: "EventSubscription", dependencies: ["ZeroMQ", "JSON", "LyceumLogging", "LyceumSupport"], path: "Sources/4-Events/EventSubscription"),
        // The publishing side of the events: PUB with sequence numbers, Clone-pattern snapshots
        // of the services' tables, and the XSUB/XPUB forwarder. Socket code; the domain arrives as values.
        // protocol/event-examples/ decoded, damaged messages refused with the field at fault, topics.
        .testTarget(name: "EventSubscriptionTests", dependencies: ["EventSubscription"]),
        .target(name: "EventPublishing", dependencies: ["EventSubscription", "ZeroMQ", "JSON", "LyceumLogging", "LyceumLifecycle", "Progress", "Books", "Telemetry", "LyceumSupport"], path: "Sources/4-Events/EventPublishing"),
        // The browser dashboard: its page (plain files served as they are, no build step), the
        // SSE feed over HTTPServer, and the bridge that feeds it from the process's own events.
        .target(
            name: "Dashboard", dependencies: ["HTTPServer", "EventSubscription", "Majordomo", "ZeroMQ", "JSON", "LyceumLifecycle", "LyceumLogging"],
            path: "Sources/4-Events/Dashboard", resources: [.copy("DashboardPage")]
        ),
        .testTarget(
            name: "EventPublishingTests",
            dependencies: ["LearningServicesTestSupport", "EventPublishing", "LearningServices", "Catalog", "Progress", "Books", "JSON", "ZeroMQ", "LyceumLifecycle", "LyceumTestSupport", "lyceum", "EventSubscription"],
            exclude: ["Subscribers"]
        ),

        // Every setting of every command, declared once each and grouped by role, resolved in one
        // place from flags > environment > file > defaults. Support modules only: a setting's value
        // is plain, and the module that applies it converts it (ServiceHosting's HostingSettings).
        .target(
            name: "Configuration",
            dependencies: ["CommandSyntax", "JSON", "Access", "LyceumLogging", "LyceumSupport"],
            path: "Sources/5-Application/Configuration"
        ),
        // The declarations against docs/operations.md's tables, and the settings' bounds against
        // those of the modules that apply them.
        .testTarget(name: "ConfigurationTests", dependencies: ["Configuration", "Books", "LearningServices", "Partitions", "EventSubscription", "Coordination"]),
        // The services a process hosts: the registry, journals opened and replayed as the
        // services' change logs, one-frame handlers counted in the metrics, events published
        // after durable writes.
        .target(
            name: "ServiceHosting",
            dependencies: ["LearningServices", "Books", "Catalog", "Partitions", "Journal", "Replication", "Majordomo", "ZeroMQ", "Access", "LyceumLifecycle", "LyceumLogging", "LyceumSupport", "EventPublishing", "EventSubscription", "Telemetry", "Configuration"],
            path: "Sources/5-Application/ServiceHosting"
        ),
        // A partitioned cluster's operations: the broker's routing and coordinator, a partitioned
        // worker's partitions on its pool, its node service, and moves between nodes.
        .target(
            name: "PartitionOperations",
            dependencies: ["ServiceHosting", "Partitions", "LearningServices", "Journal", "JSON", "Majordomo", "ZeroMQ", "Access", "LyceumLifecycle", "LyceumLogging", "LyceumSupport", "Coordination", "Replication", "Telemetry"],
            path: "Sources/5-Application/PartitionOperations"
        ),
        // Online backups of a process's journals (the lyceum.backup service and the node ops that
        // serve them), and verifying and restoring a backup directory.
        .target(
            name: "Backup",
            dependencies: ["ServiceHosting", "LearningServices", "Books", "Progress", "Partitions", "DurableFiles", "Journal", "JSON", "Majordomo", "LyceumLogging", "LyceumSupport", "Telemetry"],
            path: "Sources/5-Application/Backup"
        ),
        // The manifest's checks and the private files' modes, links and limits, on real files.
        .testTarget(name: "BackupTests", dependencies: ["Backup", "JSON", "LyceumTestSupport"]),
        // The commands' assembly: settings and security into the processes of serve, broker and
        // worker, and the other subcommands (call, status, config, journal, keys, partitions,
        // backup, restore, version).
        .target(
            name: "LyceumServer",
            dependencies: ["ServiceHosting", "PartitionOperations", "Backup", "DurableFiles", "Coordination", "LearningServices", "Catalog", "Books", "Progress", "Partitions", "JSON", "Journal", "Majordomo", "ZeroMQ", "LyceumLifecycle", "LyceumLogging", "EventPublishing", "Telemetry", "CommandSyntax", "LyceumSupport", "Access", "Security", "Configuration", "HTTPServer", "Dashboard", "EventSubscription"], path: "Sources/5-Application/LyceumServer"
        ),
        // `lyceum watch`: the subscriber's dashboard, its terminal and its signals.
        .target(name: "ProgressWatch", dependencies: ["EventSubscription", "ZeroMQ", "Majordomo", "LyceumLogging", "CommandSyntax", "Security", "Configuration"], path: "Sources/5-Application/ProgressWatch"),
        // The screen and lines of `lyceum watch` (its processes under tmux: EventPublishingTests.ProcessTests).
        .testTarget(name: "ProgressWatchTests", dependencies: ["ProgressWatch", "EventSubscription"]),
        // The commands' assembly in process (settings, keys, permissions) and the tools that
        // start no server (`partitions init`/`prune`, `keys`), run as the built `lyceum`.
        .testTarget(
            name: "LyceumServerTests",
            dependencies: ["LearningServicesTestSupport", "LyceumServer", "ServiceHosting", "PartitionOperations", "LearningServices", "Books", "Majordomo", "ZeroMQ", "Access", "Security", "JSON", "LyceumTestSupport", "lyceum", "CommandSyntax", "LoadTest", "ProgressWatch", "LyceumLifecycle", "LyceumLogging", "Configuration"]
        ),
        // Hosting in process: the registry, frames in and replies out, journals as change logs
        // (their format against Fixtures/ of earlier releases), events after durable writes.
        .testTarget(
            name: "ServiceHostingTests",
            dependencies: ["ServiceHosting", "LyceumServer", "LearningServices", "Books", "Catalog", "Journal", "Configuration", "Access", "EventPublishing", "EventSubscription", "JSON", "LyceumLifecycle", "Majordomo", "ZeroMQ", "Telemetry", "LyceumTestSupport", "lyceum"],
            exclude: ["Fixtures"]
        ),
        // Moves between nodes on in-process brokers and workers, and the leadership balance's plans.
        .testTarget(
            name: "PartitionOperationsTests",
            dependencies: ["PartitionOperations", "LyceumServer", "Partitions", "LearningServices", "Journal", "JSON", "Majordomo", "ZeroMQ", "LyceumLifecycle", "LyceumTestSupport"]
        ),
        // The dashboard of a real `lyceum serve`: its HTTP endpoint read by a Python client and
        // its page in headless chromium (Clients/).
        .testTarget(
            name: "DashboardTests",
            dependencies: ["Dashboard", "EventSubscription", "EventPublishing", "Catalog", "Majordomo", "ZeroMQ", "LyceumTestSupport", "lyceum"],
            exclude: ["Clients"]
        ),
        // End to end: the real `lyceum serve`, `broker` and `worker` (the dependency builds it),
        // unpartitioned, and independent Python peers (Clients/, run by /usr/bin/python3).
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["LearningServicesTestSupport", "LyceumServer", "LearningServices", "Catalog", "Configuration", "EventPublishing", "EventSubscription", "JSON", "Majordomo", "ZeroMQ", "LyceumTestSupport", "lyceum"],
            exclude: ["Clients"]
        ),
        // End to end, partitioned: a broker and partitioned or replicated workers (with etcd) as
        // real processes on loopback; moves, joins, leaderships and fail-overs under writes.
        .testTarget(
            name: "PartitionedEndToEndTests",
            dependencies: ["LearningServicesTestSupport", "LyceumServer", "ServiceHosting", "PartitionOperations", "LearningServices", "Catalog", "Partitions", "Coordination", "Journal", "EventPublishing", "EventSubscription", "Majordomo", "ZeroMQ", "LyceumLifecycle", "LyceumTestSupport", "lyceum"]
        ),

        // Issue 14's abuse suite and fuzzer: the real `lyceum serve`/`broker`/`worker` (the dependency
        // builds it) attacked by Python/pyzmq and raw-ZMTP scripts run by /usr/bin/python3.
        .testTarget(
            name: "AbuseTests",
            dependencies: ["Majordomo", "ZeroMQ", "LyceumTestSupport", "lyceum"],
            exclude: ["Attackers"]
        ),

        // Issue 17's cluster scenarios: deploy/netns-cluster.sh makes network namespaces for two
        // brokers, three worker hosts and a client; the real `lyceum` (the dependency builds it)
        // runs in them, and the Python ledger client (Clients/) checks what was acknowledged.
        .testTarget(
            name: "ClusterTests",
            dependencies: ["Partitions", "LyceumTestSupport", "lyceum"],
            exclude: ["Clients"]
        ),
        // Power loss (scripts/powerloss_fs.py, a FUSE filesystem that drops what was not synced) of
        // the real `lyceum serve` under retried writes, an epoch history's directory sync, and the
        // filesystem's own unittest. Root.
        .testTarget(name: "FaultTests", dependencies: ["LyceumTestSupport", "Replication", "lyceum"]),

        // Faults of the disk and of the replica set under the real `lyceum` (the dependency builds
        // it): fdatasync failing (libfiu), a full file system (a small tmpfs), a slow sync
        // (strace), two of three replicas lost; what each promises is in docs/reliability.md.
        .testTarget(name: "DiskFaultTests", dependencies: ["LyceumTestSupport", "Majordomo", "ZeroMQ", "lyceum"]),

        // Benchmarks are executables, never timed tests: `make bench-zmq` runs this one.
        .executableTarget(
            name: "zmq-throughput",
            dependencies: ["ZeroMQ", "LyceumSupport"],
            path: "Benchmarks/ZeroMQThroughput",
            exclude: ["pushpull.c"]
        ),
        // `make bench-journal` runs this one (Benchmarks/journal-bench.sh).
        .executableTarget(name: "journal-bench", dependencies: ["Journal", "LyceumSupport"], path: "Benchmarks/JournalBench"),
        // `make bench-mdp`: echo round trips through Lyceum's broker, beside the C reference (Benchmarks/mdp-bench.sh).
        .executableTarget(
            name: "mdp-bench",
            dependencies: ["Majordomo", "ZeroMQ", "LyceumLifecycle", "LyceumLogging", "LyceumSupport"],
            path: "Benchmarks/MajordomoEcho",
            exclude: ["mdp_reference.c"]
        ),
        // `swift run -c release service-handling`: per-request cost of the services, and replay speed.
        .executableTarget(
            name: "service-handling",
            dependencies: ["LearningServicesTestSupport", "LearningServices", "Books", "Catalog", "JSON", "Journal"],
            path: "Benchmarks/ServiceHandling"
        ),

        // The Swift client library for other apps' backends: typed async calls, retries, fail-over,
        // request ids, and the gap-repairing progress subscription (docs/clients.md). It links
        // EventSubscription, never EventPublishing, the journal or the domain modules: an app compiles no server code.
        .target(name: "LyceumClient", dependencies: ["Majordomo", "ZeroMQ", "Security", "EventSubscription", "JSON", "LyceumLogging", "LyceumSupport"], path: "Sources/5-Application/LyceumClient"),
        // docs/clients.md's example, run by LyceumClientTests against a real serve.
        .executableTarget(name: "SwiftClientExample", dependencies: ["LyceumClient"], path: "Examples/SwiftClientExample"),
        .testTarget(
            name: "LyceumClientTests",
            dependencies: ["LyceumClient", "Majordomo", "ZeroMQ", "EventPublishing", "JSON", "LyceumTestSupport", "lyceum", "SwiftClientExample", "EventSubscription"]
        ),

        // `make bench-client`: LyceumClient's overhead over raw MDP (Benchmarks/client-overhead.sh).
        .executableTarget(name: "client-overhead", dependencies: ["LyceumClient", "Majordomo", "ZeroMQ"], path: "Benchmarks/ClientOverhead"),

        // `lyceum bench`: load generation over the wire protocol, never the domain modules, and the command that runs it.
        .target(name: "LoadTest", dependencies: ["Majordomo", "ZeroMQ", "JSON", "LyceumLogging", "CommandSyntax", "LyceumSupport", "Security", "Configuration"], path: "Sources/5-Application/LoadTest"),
        // The process tests and the suite's quick mode run these executables; the dependency builds them.
        .testTarget(
            name: "LoadTestTests",
            dependencies: ["LoadTest", "Majordomo", "ZeroMQ", "JSON", "LyceumLifecycle", "LyceumSupport", "LyceumTestSupport", "lyceum", "zmq-throughput", "journal-bench"]
        ),
        // `make bench-events`: events/s with 100 subscribers, delivery latency, cost added to a write.
        .executableTarget(
            name: "events-bench",
            dependencies: ["LearningServicesTestSupport", "EventPublishing", "LearningServices", "LyceumServer", "ServiceHosting", "Journal", "Catalog", "Progress", "ZeroMQ", "LyceumLifecycle", "EventSubscription", "LyceumSupport"],
            path: "Benchmarks/EventsBench",
            exclude: ["pub_floor.c"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
