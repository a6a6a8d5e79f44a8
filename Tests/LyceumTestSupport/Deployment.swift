import Foundation
import Majordomo
import Testing
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// The one builder of Lyceum deployments for tests: the real `lyceum` as child processes on free
/// loopback ports — one `serve`, or brokers with (partitioned, replicated) workers and an etcd —
/// with their data under one directory. Every process is named (`serve`, `broker`, a second
/// broker's name, a worker's node), so that a test can stop, kill, suspend or restart it with
/// the command line it was started with; everything is stopped when the deployment is released.
///
/// Processes, never threads of the test runner: a command owns its signals
/// (`TerminationSignals`) and its process's limits, and the tests kill what they start. The
/// in-process counterpart, for tests of hosting alone, is a `ServiceHost`'s components run as
/// threads (`ServiceHostingTests`' `serveInProcess`).
public final class Deployment: @unchecked Sendable {
    /// Where the clients call: `serve`'s endpoint, or the first broker's.
    public let endpoint: String
    /// Where `serve` publishes its events, or the first broker's forwarder republishes the workers'.
    public let eventsEndpoint: String
    /// `serve`'s snapshot endpoint; `none` for brokers (each worker answers its own).
    public let snapshotEndpoint: String
    /// The first broker's forwarder endpoint, where workers publish (`nil` for `serve`).
    public let forwarder: String?
    /// The directory that holds the deployment's data: `serve`'s own, or one per worker node
    /// (``root(_:)``).
    public let directory: String
    /// The security of a client of ``endpoint``, for calls and for waiting (a key that may
    /// `manage` when the deployment requires CURVE).
    public let clientSecurity: SocketSecurity
    /// The etcd the replicated workers lead through, when the deployment has one.
    public let etcd: EtcdServer?
    /// The partitions the broker routes, when it is partitioned.
    public private(set) var partitions: Int?
    /// What a scenario adds to every worker's command line after ``workerCommand(_:)``, by node
    /// (its partitions, services, replication, keys): ``workerArguments(_:_:)``.
    public var workerOptions: (String) -> [String] = { _ in [] }
    /// Ports chosen for the processes, by name (a worker's metrics port), kept across restarts.
    public var ports: [String: Int] = [:]
    /// The processes, by name: the last one started under each name, running or not.
    public private(set) var processes: [String: LyceumProcess] = [:]
    /// How each process was last started: its arguments, launcher and the services it was awaited for.
    private var commandLines: [String: (arguments: [String], launcher: [String], services: [String])] = [:]
    /// The name of the process clients call: `serve` or `broker`.
    private var entry = ""
    private let ownedDirectory: TemporaryDirectory?

    private init(
        endpoint: String, eventsEndpoint: String, snapshotEndpoint: String, forwarder: String?, directory: String?,
        clientSecurity: SocketSecurity, etcd: Bool
    ) throws {
        self.endpoint = endpoint
        self.eventsEndpoint = eventsEndpoint
        self.snapshotEndpoint = snapshotEndpoint
        self.forwarder = forwarder
        self.clientSecurity = clientSecurity
        ownedDirectory = directory == nil ? try TemporaryDirectory() : nil
        self.directory = directory ?? ownedDirectory!.path
        do {
            self.etcd = etcd ? try EtcdServer() : nil
        } catch {
            // Not yet a whole deployment, so no deinit: what was made is removed here.
            ownedDirectory?.remove()
            throw error
        }
    }

    deinit {
        for process in processes.values { process.stop() }
        etcd?.remove()
        ownedDirectory?.remove()
    }

    // MARK: Building

    /// `lyceum serve` with its data in `data` and `arguments` added, on free endpoints (its
    /// events and snapshots too), under `launcher` when given, or limited to `descriptorLimit`
    /// open descriptors; returns once every one of `services` is served, asked with
    /// `clientSecurity`.
    public static func serve(
        data: String, arguments: [String] = [], endpoint: String? = nil, descriptorLimit: Int? = nil, launcher: [String] = [],
        services: [String] = standardServices, clientSecurity: SocketSecurity = .plaintext
    ) throws -> Deployment {
        let deployment = try Deployment(
            endpoint: try endpoint ?? freeLoopbackEndpoint(), eventsEndpoint: try freeLoopbackEndpoint(),
            snapshotEndpoint: try freeLoopbackEndpoint(), forwarder: nil, directory: data, clientSecurity: clientSecurity, etcd: false)
        deployment.entry = "serve"
        let limit = descriptorLimit.map { ["/usr/bin/prlimit", "--nofile=\($0):\($0)", "--"] } ?? launcher
        try deployment.start("serve", [
            "serve", "--endpoint", deployment.endpoint, "--events-endpoint", deployment.eventsEndpoint,
            "--snapshot-endpoint", deployment.snapshotEndpoint, "--data", data,
        ] + arguments, launcher: limit, registering: services)
        return deployment
    }

    /// `lyceum broker` (named `broker`) with `arguments` added, on free endpoints (a forwarder
    /// and its events endpoint too), routing `partitions` partitions when given, with a
    /// single-member etcd when `etcd`; workers come next (``startWorker(_:_:launcher:registering:)``).
    public static func broker(
        partitions: Int? = nil, arguments: [String] = [], etcd: Bool = false, directory: String? = nil,
        clientSecurity: SocketSecurity = .plaintext
    ) throws -> Deployment {
        let deployment = try Deployment(
            endpoint: try freeLoopbackEndpoint(), eventsEndpoint: try freeLoopbackEndpoint(), snapshotEndpoint: "none",
            forwarder: try freeLoopbackEndpoint(), directory: directory, clientSecurity: clientSecurity, etcd: etcd)
        deployment.entry = "broker"
        deployment.partitions = partitions
        try deployment.start("broker", [
            "broker", "--endpoint", deployment.endpoint, "--forwarder-endpoint", deployment.forwarder!,
            "--events-endpoint", deployment.eventsEndpoint,
        ] + (partitions.map { ["--partitions", String($0)] } ?? []) + arguments, registering: [])
        return deployment
    }

    /// Another broker, named `name`, on a free endpoint (returned), routing the first's
    /// partitions, with `arguments` added (and without events: the workers publish to the first's
    /// forwarder). Workers register with it when their command line names it (`--broker`).
    public func startBroker(_ name: String, arguments: [String] = []) throws -> String {
        let endpoint = try freeLoopbackEndpoint()
        try start(name, ["broker", "--endpoint", endpoint, "--events-endpoint", "none"]
            + (partitions.map { ["--partitions", String($0)] } ?? []) + arguments, registering: [])
        return endpoint
    }

    /// The services `serve` hosts: what ``serve(data:arguments:endpoint:descriptorLimit:launcher:services:clientSecurity:)`` waits for.
    public static let standardServices = ["catalog", "progress", "books"]

    /// Another process in the deployment: `lyceum` with `arguments`, named `name` (a second broker,
    /// a worker of its own making), under `launcher`; returns once `services` are served at
    /// ``endpoint`` (none: at once).
    public func start(_ name: String, _ arguments: [String], launcher: [String] = [], registering services: [String]) throws {
        precondition(processes[name]?.isRunning != true, "\(name) runs already")
        let process = try LyceumProcess(arguments, launcher: launcher)
        processes[name] = process
        commandLines[name] = (arguments, launcher, services)
        try waitUntilServing(services, at: endpoint, security: clientSecurity) { "\(name)'s stderr:\n\(process.standardError)" }
    }

    /// The data directory of worker `node`: `directory/node`.
    public func root(_ node: String) -> String { directory + "/" + node }

    /// Makes worker `node`'s data directory with `lyceum partitions init`: `count` partitions of
    /// `services` (both when empty), those of `owned` (`0-3,6`) created.
    public func initializePartitions(_ node: String, count: Int, owned: String, services: [String] = []) throws {
        let initialized = try LyceumProcess.run(
            ["partitions", "init", "--data", root(node), "--partitions", String(count), "--own", owned] + services.flatMap { ["--service", $0] })
        try #require(initialized.status == 0, "partitions init of \(node): \(initialized.stderr)")
    }

    /// Starts worker `node` (``workerArguments(_:_:)`` with `arguments`) under `launcher`, and
    /// returns once `services` are served.
    public func startWorker(_ node: String, _ arguments: [String] = [], launcher: [String] = [], registering services: [String]) throws {
        try start(node, workerArguments(node, arguments), launcher: launcher, registering: services)
    }

    /// `lyceum worker` of node `node` on this deployment's broker: the part of its command line
    /// every worker shares.
    public func workerCommand(_ node: String) -> [String] {
        ["worker", "--broker", endpoint] + (forwarder.map { ["--forwarder-endpoint", $0] } ?? []) + ["--node", node, "--data", root(node)]
            + (partitions.map { ["--partitions", String($0)] } ?? [])
    }

    /// Worker `node`'s whole command line: ``workerCommand(_:)``, the scenario's ``workerOptions``, then `extra`.
    public func workerArguments(_ node: String, _ extra: [String] = []) -> [String] {
        workerCommand(node) + workerOptions(node) + extra
    }

    /// The running workers, by node: every running process but the brokers and `serve`.
    public var workers: [String: LyceumProcess] {
        processes.filter { name, process in commandLines[name]?.arguments.first == "worker" && process.isRunning }
    }

    // MARK: Faults

    /// The process clients call: `serve`, or the first broker.
    public var process: LyceumProcess { processes[entry]! }

    /// The process named `name` (the last one started under that name).
    public func process(_ name: String) throws -> LyceumProcess {
        try #require(processes[name], "no process \(name) (there are \(processes.keys.sorted()))")
    }

    /// Sends `signal` to process `name` (the entry process by default) and waits until it is gone.
    /// - Returns: its exit status.
    @discardableResult
    public func stop(_ name: String? = nil, _ signal: Int32 = SIGKILL) -> Int32? {
        processes[name ?? entry]?.signal(signal)
    }

    /// Stops process `name` (the entry process by default) with `signal`, if it still runs, and
    /// starts it again with the command line it had, under `launcher` when given; returns once
    /// `services` (by default those it was awaited for at its start) are served.
    /// - Returns: the stopped process's exit status.
    @discardableResult
    public func restart(_ name: String? = nil, after signal: Int32 = SIGTERM, launcher: [String]? = nil, registering services: [String]? = nil) throws -> Int32? {
        let name = name ?? entry
        let commandLine = try #require(commandLines[name], "\(name) was never started")
        let status = stop(name, signal)
        try start(name, commandLine.arguments, launcher: launcher ?? commandLine.launcher, registering: services ?? commandLine.services)
        return status
    }

    /// Every running process's standard error, by name: what a failed expectation shows.
    public var logs: String {
        processes.sorted { $0.key < $1.key }.map { "\($0.key):\n\($0.value.standardError)" }.joined(separator: "\n")
    }

    // MARK: Calls

    /// A 7/MDP client of ``endpoint`` with ``clientSecurity``; the caller closes it.
    public func client(timeout: Duration = .seconds(10), attempts: Int = 1) throws -> Client {
        Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: timeout, attempts: attempts, security: clientSecurity),
               context: try Context())
    }

    /// One request of one frame to `service` (`attempts` tries), its reply parsed.
    public func call(_ service: String, _ json: String, timeout: Duration = .seconds(10), attempts: Int = 1) throws -> [String: Any] {
        let reply = try call(service, frames: [Array(json.utf8)], timeout: timeout, attempts: attempts)
        try #require(reply.count == 1, "expected one reply frame from \(service), got \(reply.count)")
        return try parse(reply[0])
    }

    /// Sends `frames` to `service` and returns the reply frames.
    public func call(_ service: String, frames: [[UInt8]], timeout: Duration = .seconds(10), attempts: Int = 1) throws -> [[UInt8]] {
        let client = try client(timeout: timeout, attempts: attempts)
        defer { client.close() }
        return try client.call(service, body: frames)
    }

    /// Whether a worker (or the server itself) serves `service` now.
    public func isRegistered(_ service: String) throws -> Bool {
        let client = try client(timeout: .seconds(5))
        defer { client.close() }
        return try client.isRegistered(service)
    }
}

/// Two `lyceum broker`s and one `lyceum worker` registered with both (durability `always`): the
/// deployment docs/operations.md's "Several brokers" describes, as real processes.
extension Deployment {
    /// Fast heartbeats (3 × 250 ms), so that a dead broker is noticed within a second.
    public static let heartbeat = ["--heartbeat-interval", "250", "--heartbeat-liveness", "3"]

    /// The first broker (named `broker`, at ``endpoint``), a second (named `second`, whose
    /// endpoint is returned beside) and worker `w1` serving `services` with its data under
    /// `data`; returns once they are served through each broker.
    public static func twoBrokers(data: String, services: [String] = ["books"]) throws -> (deployment: Deployment, second: String) {
        let deployment = try Deployment.broker(arguments: heartbeat, directory: data)
        let second = try deployment.startBroker("second", arguments: heartbeat)
        try deployment.startWorker("w1", [
            "--broker", second, "--sessions", "4", "--durability", "always", "--reconnect-initial", "100",
        ] + services.flatMap { ["--service", $0] } + heartbeat, registering: services)
        try waitUntilServing(services, at: second) { deployment.logs }
        return (deployment, second)
    }
}
