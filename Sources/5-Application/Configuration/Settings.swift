#if canImport(Glibc)
import Glibc
#endif
import Access
import LyceumLogging
import LyceumSupport

/// Every setting a Lyceum command reads, with its default, grouped by role as `SettingRole`
/// groups their declarations. Values arrive as text from a source (defaults, a configuration
/// file, `LYCEUM_…` environment variables, the command line); `set(_:to:from:)` checks and stores
/// them through the setting's declaration (`SettingKey`), so that every source gets the same
/// checks and error messages. `ConfigurationSources` applies the sources in precedence order.
/// The values are plain (numbers, texts, durations, support modules' types): the module that
/// applies one converts it (`ServiceHosting`'s `HostingSettings`, the lease timing of `worker`).
public struct Settings: Sendable {
    // MARK: Logs and heartbeats (`serve`, `broker`, `worker`)

    /// The least severe level logged.
    public var logLevel = LogLevel.info
    /// How log lines are written; `nil` means human text on a terminal, logfmt otherwise.
    public var logFormat: LogFormat?
    /// Lines a second written per component and message below `critical` (warnings about dropped
    /// messages, say); the rest are counted in a summary line once a second. 0 writes every line.
    public var logRateLimit = Logger.defaultLinesPerSecond
    /// Majordomo heartbeat interval between broker and workers.
    public var heartbeatInterval = Duration.milliseconds(2500)
    /// Heartbeat intervals of silence after which a peer is considered gone.
    public var heartbeatLiveness = 3
    /// The Majordomo a worker speaks to its brokers: 7 (7/MDP) or 18 (18/MDP in majortomo's
    /// framing, for majortomo's broker; Lyceum's broker takes both).
    public var mdp = 7

    // MARK: The metrics port (`serve`, `broker`, `worker`; issue 27)

    /// The TCP port serving `GET /metrics`, `/healthz` and `/readyz` on ``metricsAddress``; 0 serves none.
    public var metricsPort = 0
    /// The IPv4 address the metrics port binds; any but loopback requires a token
    /// (``metricsToken`` or ``metricsTokenFile``).
    public var metricsAddress = "127.0.0.1"
    /// The bearer token `GET /metrics` requires, as written in the configuration; `nil` requires
    /// none unless ``metricsTokenFile`` gives one.
    public var metricsToken: String?
    /// The file holding the token and the token it held when the setting was resolved.
    var tokenFile: TokenFile?
    /// Connections `GET /metrics` keeps open at once; a new one beyond them closes the idlest.
    /// 32: a scraper or two, and room for a hostile peer's attempts.
    public var metricsConnections = 32
    /// Time a metrics connection has from being accepted to its response sent.
    public var metricsTimeout = Duration.seconds(2)

    // MARK: The broker (`serve`, `broker`)

    /// Endpoints the broker binds for clients.
    public var endpoints = ["tcp://127.0.0.1:5555"]
    /// Requests the broker queues for one service before refusing more with `queue_full`.
    public var queueLimit = 1000
    /// Requests the broker queues for all services together before refusing with `overloaded`.
    public var queueLimitTotal = 10_000
    /// ZeroMQ high-water mark of the broker's socket for replies: messages queued per peer.
    public var highWaterMark = 1000
    /// Messages from one peer the broker's socket holds unread before libzmq stops reading it.
    public var receiveHighWaterMark = 100
    /// The broker's longest batch of request handling before deferred replies leave (`max-batch-ms`).
    public var maxBatch = Duration.milliseconds(2)
    /// How long a request waits for a service (or partition) with no worker before the broker
    /// answers `service_unknown` (`unknown-service-timeout`).
    public var unknownServiceTimeout = Duration.milliseconds(2000)
    /// TCP connections the broker holds at once; more are cut as they are accepted, and the
    /// value is lowered to fit the process's descriptor limit (`max-connections`).
    public var maxConnections = 4096
    /// Bytes libzmq may hold for one connection's incoming messages, a message in progress
    /// included, before the connection is cut (`max-input-bytes`).
    public var maxInputBytes = 32 << 20
    /// Bytes sent to one connection and not yet acknowledged by its peer before it is cut (`max-output-bytes`).
    public var maxOutputBytes = 16 << 20

    // MARK: Events (protocol/events.md)

    /// Where events are published for subscribers such as `lyceum watch`: `serve` binds its
    /// publisher here, `broker` its forwarder's subscriber side; ``DefaultEventEndpoints/none`` for no events.
    public var eventsEndpoint = DefaultEventEndpoints.publish
    /// Where `serve` answers event snapshot requests.
    public var snapshotEndpoint = DefaultEventEndpoints.snapshot
    /// Where `broker`'s event forwarder takes workers' events in, and `worker` publishes to:
    /// a worker publishes into every one, so each broker of a cluster republishes its events.
    public var forwarderEndpoints = [DefaultEventEndpoints.forwarderInput]
    /// The most bytes of one event snapshot reply body (`serve`, `worker`); a page always holds
    /// at least one entry, and larger snapshots arrive in pages (protocol/events.md, "Pages").
    public var snapshotPageBytes = 64 << 10

    // MARK: The browser dashboard (`serve`, `broker`; issue 18)

    /// The TCP port serving the dashboard's page and event stream; 0 serves none.
    public var dashboardPort = 0
    /// The IPv4 address the dashboard binds; any but loopback requires ``dashboardToken``.
    public var dashboardAddress = "127.0.0.1"
    /// The bearer token the dashboard's page and stream require; `nil` requires none.
    public var dashboardToken: String?

    // MARK: The learning services a process hosts (`serve`, `worker`)

    /// The data directory; each stateful service keeps its journal in a subdirectory named after it.
    public var dataDirectory = "./lyceum-data"
    /// Catalog files or directories; empty means the sample catalog that ships with Lyceum.
    public var catalogPaths: [String] = []
    /// When a journaled write counts as durable.
    public var durability = DurabilityPolicy.always
    /// Bytes of items one page of a list reply (`books list`, `progress list`, catalog
    /// `list_courses` and `search`) may hold before it stops and returns `next_cursor` (issue 14).
    public var maxReplyBytes = 256 << 10
    /// The most books one learner's library holds; a create past it is `limit_exceeded` (issue 40).
    public var maxBooksPerLearner = 10_000
    /// The most UTF-8 bytes of titles, authors and reviews one learner's library holds; a
    /// create, or an update that grows a book, past it is `limit_exceeded`.
    public var maxLibraryBytes = 64 << 20
    /// How long a backup may go without a request from its client before it is abandoned and
    /// its snapshot files removed (`backup-idle-limit`).
    public var backupIdleLimit = Duration.seconds(60)

    // MARK: A worker process (`worker`)

    /// The services a `worker` process serves; empty, every service the process knows. A name
    /// is checked against the process's services where they are known, by the command.
    public var services: [String] = []
    /// Worker sessions per service in a `worker` process: one thread serves them all, each
    /// session holds one request at a time, so this bounds the writes that share a journal sync.
    public var sessionsPerService = 16
    /// A worker's first wait before reconnecting to a lost broker; doubled up to `reconnectMaximum`.
    public var reconnectInitial = Duration.milliseconds(1000)
    /// The longest wait between a worker's reconnection attempts.
    public var reconnectMaximum = Duration.seconds(32)

    // MARK: Partitions (issue 17)

    /// The cluster's partition count for the stateful services (`books`, `progress`), the same
    /// on its brokers and workers (`partitions`); 0, the default, is an unpartitioned deployment.
    public var partitions = 0
    /// A worker's node name (`node`): its node service is `lyceum.node.<node>`, and moves name
    /// it. The host name by default (its identifier characters).
    public var node = Settings.hostName
    /// Whether a partitioned worker may start holding no partition of a service it serves
    /// (`join`): a new host joining the cluster empty, to receive its share by moves. Off, such a
    /// worker refuses to start, so that a mistyped `data` path is not served as an empty node.
    public var join = false

    // MARK: Replicated partitions (`worker`; issue 25, protocol/replication.md)

    /// The size of each partition's replica set (`replicas`): 1, the default, is the
    /// unreplicated partition of before, with no etcd; more needs ``etcdEndpoints``,
    /// ``replicationEndpoint`` and ``partitions``.
    public var replicas = 1
    /// The client URLs of the etcd members the leaderships are kept in (`etcd-endpoint`,
    /// `http://HOST:PORT`, one per member).
    public var etcdEndpoints: [String] = []
    /// Where this worker's replication ROUTER binds, routable by the other replicas
    /// (`replication-endpoint`, `tcp://ADDRESS:PORT`): one socket for every partition it leads.
    public var replicationEndpoint: String?
    /// A leader lease's time to live in whole seconds (`lease-ttl`).
    public var leaseTTLSeconds = 5
    /// How long after a successful lease renewal the next one is sent (`lease-keep-alive`).
    public var leaseKeepAlive = Duration.seconds(1)
    /// How long a lease renewal may keep failing before the leader gives up (`lease-retry`).
    public var leaseRetry = Duration.seconds(2)
    /// How often a worker looks whether it leads more than its share of its replicated
    /// partitions and hands one leadership to a caught-up follower leading fewer
    /// (`leader-balance-interval`; zero: never). 5 s: a host that returns leads its share again
    /// within a minute, one hand-off at a time.
    public var leaderBalanceInterval = Duration.seconds(5)

    // MARK: Security (issue 16)

    /// The path of this process's secret certificate (zcert, `NAME_secret`); set, it turns
    /// CURVE on for every socket the process binds or connects (`curve-secret-key`).
    public var curveSecretKey: String?
    /// The path of the broker's public certificate, for the processes that connect to it:
    /// `worker`, `call`, `status` (`curve-server-key`).
    public var curveServerKey: String?
    /// The directory of authorised public certificates, required by `serve` and `broker` with
    /// CURVE and reloaded on SIGHUP (`authorized-keys`).
    public var authorizedKeys: String?
    /// Whether `serve` and `broker` may bind a non-loopback endpoint without CURVE (`insecure`).
    public var insecure = false

    // MARK: Calling brokers

    /// The brokers a worker registers with, every one of them (`worker`), or a client tries, in
    /// order, failing over to the next (`call`, `status`).
    public var brokers = ["tcp://127.0.0.1:5555"]
    /// How long `call` and `status` wait for a reply.
    public var timeout = Duration.milliseconds(5000)

    // MARK: Derived values

    /// The file holding the metrics token (`metrics-token-file`), if one is given.
    public var metricsTokenFile: String? { tokenFile?.path }

    /// The token `GET /metrics` requires: ``metricsToken``'s or the one in ``metricsTokenFile``.
    public var metricsBearerToken: String? { metricsToken ?? tokenFile?.token }

    /// Whether `serve` publishes events and `broker` forwards them: `events-endpoint` is not `none`.
    public var publishesEvents: Bool { eventsEndpoint != DefaultEventEndpoints.none }

    /// Where each setting that is not a default came from.
    public private(set) var origins: [SettingKey: SettingOrigin] = [:]

    /// The defaults.
    public init() {}

    /// Stores `text` as the value of `key`, coming from `origin`. A repeatable setting's first
    /// value from a source replaces what lower-precedence sources gave; later ones add to it.
    /// - Throws: `SettingsError` naming the key and origin when `text` is not a valid value.
    public mutating func set(_ key: SettingKey, to text: String, from origin: SettingOrigin) throws(SettingsError) {
        let adding = key.isRepeatable && origins[key]?.precedence == origin.precedence
        do throws(SettingRefusal) {
            try key.store(&self, text, adding)
        } catch {
            throw SettingsError(key: key, origin: origin, message: error.message)
        }
        origins[key] = origin
    }

    /// The value of `key` as text that `set(_:to:from:)` accepts; repeatable settings give one
    /// element per value.
    public func values(of key: SettingKey) -> [String] {
        key.texts(self)
    }

    /// The host name's identifier characters (at most ``Identifier/maximumLength``), or `node`
    /// when none is left: the default node name.
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "node" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }.filter(Identifier.isAllowed), as: UTF8.self)
        return name.isEmpty ? "node" : String(name.prefix(Identifier.maximumLength))
    }()
}

/// Where a setting's value came from.
public enum SettingOrigin: Sendable, Equatable, CustomStringConvertible {
    /// Lyceum's built-in default.
    case defaultValue
    /// A configuration file, and the line when the format has lines.
    case file(path: String, line: Int?)
    /// An environment variable.
    case environment(variable: String)
    /// A command-line flag.
    case commandLine

    /// Higher wins: defaults < file < environment < command line.
    public var precedence: Int {
        switch self {
        case .defaultValue: 0
        case .file: 1
        case .environment: 2
        case .commandLine: 3
        }
    }

    /// How `lyceum config` and error messages name the origin.
    public var description: String {
        switch self {
        case .defaultValue: "default"
        case .file(let path, let line?): "file \(path):\(line)"
        case .file(let path, nil): "file \(path)"
        case .environment(let variable): "environment \(variable)"
        case .commandLine: "command line"
        }
    }
}

/// A setting refused: its key, where the value came from, and what was wrong.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting, or `nil` when the problem is not one setting's (e.g. a stray argument).
    public let key: SettingKey?
    /// Where the refused value came from.
    public let origin: SettingOrigin
    /// What was wrong.
    public let message: String

    /// A refusal of `key`'s value from `origin`.
    public init(key: SettingKey?, origin: SettingOrigin, message: String) {
        self.key = key
        self.origin = origin
        self.message = message
    }

    /// `--sessions: expected an integer from 1 to 64, got 'x'` for the command line;
    /// `sessions (file lyceum.conf:3): …` or `LYCEUM_SESSIONS (environment): …` otherwise.
    public var description: String {
        switch origin {
        case .commandLine: key.map { "\($0.flag): \(message)" } ?? message
        case .environment(let variable): "\(variable) (environment): \(message)"
        case .file: key.map { "\($0.rawValue) (\(origin)): \(message)" } ?? "\(origin): \(message)"
        case .defaultValue: key.map { "\($0.rawValue) (default): \(message)" } ?? message
        }
    }
}
