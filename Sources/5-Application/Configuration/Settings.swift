#if canImport(Glibc)
import EventWire
import Glibc
#endif
import Access
import Books
import Coordination
import Events
import Journal
import LearningServices
import LyceumLogging
import Partitions

/// Every setting a Lyceum command reads, with its default. Values arrive as text from a source
/// (defaults, a configuration file, `LYCEUM_…` environment variables, the command line);
/// `set(_:to:from:)` checks and stores them, so that every source gets the same checks and
/// error messages. `ConfigurationSources` applies the sources in precedence order.
public struct Settings: Sendable {
    /// Endpoints the broker binds for clients (`serve`, `broker`).
    public var endpoints = ["tcp://127.0.0.1:5555"]
    /// The brokers a worker registers with, every one of them (`worker`), or a client tries, in
    /// order, failing over to the next (`call`, `status`).
    public var brokers = ["tcp://127.0.0.1:5555"]
    /// The data directory; each stateful service keeps its journal in a subdirectory named after it.
    public var dataDirectory = "./lyceum-data"
    /// Catalog files or directories; empty means the sample catalog that ships with Lyceum.
    public var catalogPaths: [String] = []
    /// The services a `worker` process serves; empty, every service the process knows. A name
    /// is checked against the process's services where they are known, by the command.
    public var services: [String] = []
    /// Worker sessions per service in a `worker` process: one thread serves them all, each
    /// session holds one request at a time, so this bounds the writes that share a journal sync.
    public var sessionsPerService = 16
    /// When a journaled write counts as durable.
    public var durability = DurabilityPolicy.always
    /// How long `call` and `status` wait for a reply.
    public var timeout = Duration.milliseconds(5000)
    /// The least severe level logged.
    public var logLevel = LogLevel.info
    /// How log lines are written; `nil` means human text on a terminal, logfmt otherwise.
    public var logFormat: LogFormat?
    /// The TCP port serving `GET /metrics`, `/healthz` and `/readyz` on ``metricsAddress``; 0 serves none.
    public var metricsPort = 0
    /// Majordomo heartbeat interval between broker and workers.
    public var heartbeatInterval = Duration.milliseconds(2500)
    /// Heartbeat intervals of silence after which a peer is considered gone.
    public var heartbeatLiveness = 3
    /// The Majordomo a worker speaks to its brokers: 7 (7/MDP) or 18 (18/MDP in majortomo's
    /// framing, for majortomo's broker; Lyceum's broker takes both).
    public var mdp = 7
    /// A worker's first wait before reconnecting to a lost broker; doubled up to `reconnectMaximum`.
    public var reconnectInitial = Duration.milliseconds(1000)
    /// The longest wait between a worker's reconnection attempts.
    public var reconnectMaximum = Duration.seconds(32)
    /// Requests the broker queues for one service before refusing more with `queue_full`.
    public var queueLimit = 1000
    /// Requests the broker queues for all services together before refusing with `overloaded`.
    public var queueLimitTotal = 10_000
    /// ZeroMQ high-water mark of the broker's socket for replies: messages queued per peer.
    public var highWaterMark = 1000
    /// Messages from one peer the broker's socket holds unread before libzmq stops reading it.
    public var receiveHighWaterMark = 100
    /// Where events are published for subscribers such as `lyceum watch`: `serve` binds its
    /// publisher here, `broker` its forwarder's subscriber side; ``DefaultEventEndpoints/none`` for no events.
    public var eventsEndpoint = DefaultEventEndpoints.publish
    /// Where `serve` answers event snapshot requests.
    public var snapshotEndpoint = DefaultEventEndpoints.snapshot
    /// Where `broker`'s event forwarder takes workers' events in, and `worker` publishes to:
    /// a worker publishes into every one, so each broker of a cluster republishes its events.
    public var forwarderEndpoints = [DefaultEventEndpoints.forwarderInput]
    /// The broker's longest batch of request handling before deferred replies leave (`max-batch-ms`).
    public var maxBatch = Duration.milliseconds(2)
    /// How long a request waits for a service (or partition) with no worker before the broker
    /// answers `service_unknown` (`unknown-service-timeout`).
    public var unknownServiceTimeout = Duration.milliseconds(2000)
    /// How long a backup may go without a request from its client before it is abandoned and
    /// its snapshot files removed (`backup-idle-limit`).
    public var backupIdleLimit = Duration.seconds(60)
    /// TCP connections the broker holds at once; more are cut as they are accepted, and the
    /// value is lowered to fit the process's descriptor limit (`max-connections`).
    public var maxConnections = 4096
    /// Bytes libzmq may hold for one connection's incoming messages, a message in progress
    /// included, before the connection is cut (`max-input-bytes`).
    public var maxInputBytes = 32 << 20
    /// Bytes sent to one connection and not yet acknowledged by its peer before it is cut (`max-output-bytes`).
    public var maxOutputBytes = 16 << 20

    // Bounds on what a hostile peer can make the logs and the metrics endpoint do.
    /// Lines a second written per component and message below `critical` (warnings about dropped
    /// messages, say); the rest are counted in a summary line once a second. 0 writes every line.
    public var logRateLimit = Logger.defaultLinesPerSecond
    /// Connections `GET /metrics` keeps open at once; a new one beyond them closes the idlest.
    /// 32: a scraper or two, and room for a hostile peer's attempts.
    public var metricsConnections = 32
    /// Time a metrics connection has from being accepted to its response sent.
    public var metricsTimeout = Duration.seconds(2)
    // Metrics from another host (issue 27).
    /// The IPv4 address the metrics port binds; any but loopback requires a token
    /// (``metricsToken`` or ``metricsTokenFile``).
    public var metricsAddress = "127.0.0.1"
    /// The bearer token `GET /metrics` requires, as written in the configuration; `nil` requires
    /// none unless ``metricsTokenFile`` gives one.
    public var metricsToken: String?
    /// A file holding the token (mode 0600 or stricter), so that it is on no command line and in
    /// no environment; read when the setting is resolved (at start, and again on SIGHUP).
    public var metricsTokenFile: String?
    /// The token read from ``metricsTokenFile``.
    private var metricsTokenFromFile: String?
    /// The token `GET /metrics` requires: ``metricsToken``'s or the one in ``metricsTokenFile``.
    public var metricsBearerToken: String? { metricsToken ?? metricsTokenFromFile }
    // Snapshot paging (issue 14, finding 3d).
    /// The most bytes of one event snapshot reply body (`serve`, `worker`); a page always holds
    /// at least one entry, and larger snapshots arrive in pages (protocol/events.md, "Pages").
    public var snapshotPageBytes = SnapshotProtocol.defaultPageBytes
    // Limits of replies (issue 14).
    /// Bytes of items one page of a list reply (`books list`, `progress list`, catalog
    /// `list_courses` and `search`) may hold before it stops and returns `next_cursor`.
    public var maxReplyBytes = ReplyBudget.standard.maxBytes
    // Per-learner limits (issue 40).
    /// The most books one learner's library holds (`serve`, `worker`); a create past it is
    /// `limit_exceeded`.
    public var maxBooksPerLearner = LibraryLimits.standard.books
    /// The most UTF-8 bytes of titles, authors and reviews one learner's library holds
    /// (`serve`, `worker`); a create, or an update that grows a book, past it is `limit_exceeded`.
    public var maxLibraryBytes = LibraryLimits.standard.contentBytes

    // The browser dashboard (issue 18).
    /// The TCP port serving the dashboard's page and event stream (`serve`, `broker`); 0 serves none.
    public var dashboardPort = 0
    /// The IPv4 address the dashboard binds; any but loopback requires ``dashboardToken``.
    public var dashboardAddress = "127.0.0.1"
    /// The bearer token the dashboard's page and stream require; `nil` requires none.
    public var dashboardToken: String?
    // Security (issue 16).
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

    // Partitions (issue 17).
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

    // Replicated partitions (issue 25, protocol/replication.md).
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
    public var leaseTTLSeconds = LeaseTiming.standard.ttlSeconds
    /// How long after a successful lease renewal the next one is sent (`lease-keep-alive`).
    public var leaseKeepAlive = LeaseTiming.standard.keepAlivePeriod
    /// How long a lease renewal may keep failing before the leader gives up (`lease-retry`).
    public var leaseRetry = LeaseTiming.standard.retry

    /// The lease timings of `lease-ttl`, `lease-keep-alive` and `lease-retry`, which
    /// ``checkConflicts()`` has checked against the rule keep-alive + 2 × retry ≤ ttl.
    public var leaseTiming: LeaseTiming {
        get throws(CoordinationError) { try LeaseTiming(ttlSeconds: leaseTTLSeconds, keepAlivePeriod: leaseKeepAlive, retry: leaseRetry) }
    }

    /// The partition scheme of `partitions`; `nil` when unpartitioned.
    public var partitionScheme: PartitionScheme? { try? PartitionScheme(count: partitions) }

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
        func invalid(_ expectation: String) -> SettingsError {
            SettingsError(key: key, origin: origin, message: "expected \(expectation), got '\(text)'")
        }
        func integer(_ range: ClosedRange<Int>, _ unit: String = "an integer") throws(SettingsError) -> Int {
            guard let value = Int(text), range.contains(value) else {
                throw invalid("\(unit) from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }
        func boolean() throws(SettingsError) -> Bool {
            guard let flag = ["true": true, "false": false][text] else { throw invalid("true or false") }
            return flag
        }
        switch key {
        case .endpoint:
            guard Self.isEndpoint(text) else { throw invalid("an endpoint such as tcp://127.0.0.1:5555") }
            endpoints = adding ? endpoints + [text] : [text]
        case .broker:
            guard Self.isEndpoint(text) else { throw invalid("an endpoint such as tcp://127.0.0.1:5555") }
            brokers = adding ? brokers + [text] : [text]
        case .data:
            guard !text.isEmpty else { throw invalid("a directory") }
            dataDirectory = text
        case .catalog:
            guard !text.isEmpty else { throw invalid("a catalog file or directory") }
            catalogPaths = adding ? catalogPaths + [text] : [text]
        case .service:
            guard Identifier.isValid(text) else { throw invalid("a service name") }
            let current = adding ? services : []
            services = current.contains(text) ? current : current + [text]
        case .sessions:
            sessionsPerService = try integer(Self.sessionRange)
        case .durability:
            guard let policy = DurabilityPolicy(text) else { throw invalid("always, none, interval or interval:MILLISECONDS") }
            durability = policy
        case .timeout:
            timeout = .milliseconds(try integer(Self.timeoutRange, "milliseconds"))
        case .logLevel:
            guard let level = LogLevel(name: text) else {
                throw invalid("one of " + LogLevel.allCases.map(\.description).joined(separator: ", "))
            }
            logLevel = level
        case .logFormat:
            if text == "auto" {
                logFormat = nil
            } else {
                guard let format = LogFormat(rawValue: text) else {
                    throw invalid("auto, " + LogFormat.allCases.map(\.rawValue).joined(separator: ", "))
                }
                logFormat = format
            }
        case .metricsPort:
            metricsPort = try integer(0...65535, "a TCP port")
        case .heartbeatInterval:
            heartbeatInterval = .milliseconds(try integer(10...86_400_000, "milliseconds"))
        case .heartbeatLiveness:
            heartbeatLiveness = try integer(1...1000)
        case .mdp:
            guard text == "7" || text == "18" else { throw invalid("7 or 18") }
            mdp = text == "7" ? 7 : 18
        case .reconnectInitial:
            reconnectInitial = .milliseconds(try integer(1...3_600_000, "milliseconds"))
        case .reconnectMaximum:
            reconnectMaximum = .milliseconds(try integer(1...3_600_000, "milliseconds"))
        case .queueLimit:
            queueLimit = try integer(1...10_000_000)
        case .queueLimitTotal:
            queueLimitTotal = try integer(1...10_000_000)
        case .highWaterMark:
            highWaterMark = try integer(0...10_000_000)
        case .receiveHighWaterMark:
            receiveHighWaterMark = try integer(1...10_000_000)
        case .eventsEndpoint:
            guard Self.isEndpoint(text) || text == DefaultEventEndpoints.none else {
                throw invalid("an endpoint such as \(DefaultEventEndpoints.publish), or \(DefaultEventEndpoints.none) for no events")
            }
            eventsEndpoint = text
        case .snapshotEndpoint:
            guard Self.isEndpoint(text) else { throw invalid("an endpoint such as \(DefaultEventEndpoints.snapshot)") }
            snapshotEndpoint = text
        case .forwarderEndpoint:
            guard Self.isEndpoint(text) else { throw invalid("an endpoint such as \(DefaultEventEndpoints.forwarderInput)") }
            forwarderEndpoints = adding ? forwarderEndpoints + [text] : [text]
        case .logRateLimit:
            logRateLimit = try integer(0...1_000_000, "lines per second (0: no limit)")
        case .metricsConnections:
            metricsConnections = try integer(1...10_000)
        case .metricsTimeout:
            metricsTimeout = .milliseconds(try integer(1...600_000, "milliseconds"))
        case .snapshotPageBytes:
            snapshotPageBytes = try integer(SnapshotProtocol.pageBytesRange, "bytes")
        case .maxReplyBytes:
            maxReplyBytes = try integer(ReplyBudget.allowedBytes, "bytes")
        case .maxBooksPerLearner:
            maxBooksPerLearner = try integer(LibraryLimits.allowedBooks, "books")
        case .maxLibraryBytes:
            maxLibraryBytes = try integer(LibraryLimits.allowedContentBytes, "bytes")
        case .maxBatch:
            maxBatch = .milliseconds(try integer(1...1000, "milliseconds"))
        case .unknownServiceTimeout:
            unknownServiceTimeout = .milliseconds(try integer(1...600_000, "milliseconds"))
        case .backupIdleLimit:
            backupIdleLimit = .milliseconds(try integer(1...3_600_000, "milliseconds"))
        case .maxConnections:
            maxConnections = try integer(1...1_000_000)
        case .maxInputBytes:
            maxInputBytes = try integer(Self.byteBudgetRange, "bytes")
        case .maxOutputBytes:
            maxOutputBytes = try integer(Self.byteBudgetRange, "bytes")
        case .dashboardPort:
            dashboardPort = try integer(0...65535, "a TCP port")
        case .dashboardAddress:
            var address = in_addr()
            guard inet_pton(AF_INET, text, &address) == 1 else { throw invalid("an IPv4 address such as 127.0.0.1") }
            dashboardAddress = text
        case .dashboardToken:
            guard Self.isBearerToken(text) else { throw invalid(Self.bearerTokenRule) }
            dashboardToken = text
        case .metricsAddress:
            var address = in_addr()
            guard inet_pton(AF_INET, text, &address) == 1 else { throw invalid("an IPv4 address such as 127.0.0.1") }
            metricsAddress = text
        case .metricsToken:
            guard Self.isBearerToken(text) else { throw invalid(Self.bearerTokenRule) }
            metricsToken = text
        case .metricsTokenFile:
            guard !text.isEmpty else { throw invalid("the path of a file holding the metrics token") }
            do throws(TokenFileError) {
                metricsTokenFromFile = try Self.readToken(at: text)
            } catch {
                throw SettingsError(key: key, origin: origin, message: error.message)
            }
            metricsTokenFile = text
        case .curveSecretKey:
            guard !text.isEmpty else { throw invalid("the path of a secret certificate (NAME_secret)") }
            curveSecretKey = text
        case .curveServerKey:
            guard !text.isEmpty else { throw invalid("the path of the broker's public certificate") }
            curveServerKey = text
        case .authorizedKeys:
            guard !text.isEmpty else { throw invalid("a directory of public certificates") }
            authorizedKeys = text
        case .partitions:
            guard text == "0" || (try? PartitionScheme(count: Int(text) ?? 0)) != nil else {
                throw invalid("0 (unpartitioned) or a partition count from \(PartitionScheme.counts.lowerBound) to \(PartitionScheme.counts.upperBound)")
            }
            partitions = Int(text)!
        case .node:
            guard Identifier.isValid(text) else { throw invalid("1-\(Identifier.maximumLength) of the characters A-Z a-z 0-9 . _ - : @ +") }
            node = text
        case .insecure:
            insecure = try boolean()
        case .join:
            join = try boolean()
        case .replicas:
            replicas = try integer(Self.replicaRange)
        case .etcdEndpoint:
            guard (try? GatewayEndpoint(text)) != nil else { throw invalid("an etcd member's client URL such as http://127.0.0.1:2379") }
            etcdEndpoints = adding ? etcdEndpoints + [text] : [text]
        case .replicationEndpoint:
            guard Self.replicationPort(of: text) != nil else { throw invalid("an endpoint such as tcp://10.0.0.11:5570") }
            replicationEndpoint = text
        case .leaseTTL:
            leaseTTLSeconds = try integer(2...3600, "seconds")
        case .leaseKeepAlive:
            leaseKeepAlive = .milliseconds(try integer(1...3_600_000, "milliseconds"))
        case .leaseRetry:
            leaseRetry = .milliseconds(try integer(1...3_600_000, "milliseconds"))
        }
        origins[key] = origin
    }

    /// The value of `key` as text that `set(_:to:from:)` accepts; repeatable settings give one
    /// element per value.
    public func values(of key: SettingKey) -> [String] {
        switch key {
        case .endpoint: endpoints
        case .broker: brokers
        case .data: [dataDirectory]
        case .catalog: catalogPaths
        case .service: services
        case .sessions: [String(sessionsPerService)]
        case .durability: [durability.description]
        case .timeout: [String(timeout.milliseconds)]
        case .logLevel: [logLevel.description]
        case .logFormat: [logFormat?.rawValue ?? "auto"]
        case .metricsPort: [String(metricsPort)]
        case .heartbeatInterval: [String(heartbeatInterval.milliseconds)]
        case .heartbeatLiveness: [String(heartbeatLiveness)]
        case .mdp: [String(mdp)]
        case .reconnectInitial: [String(reconnectInitial.milliseconds)]
        case .reconnectMaximum: [String(reconnectMaximum.milliseconds)]
        case .queueLimit: [String(queueLimit)]
        case .queueLimitTotal: [String(queueLimitTotal)]
        case .highWaterMark: [String(highWaterMark)]
        case .receiveHighWaterMark: [String(receiveHighWaterMark)]
        case .eventsEndpoint: [eventsEndpoint]
        case .snapshotEndpoint: [snapshotEndpoint]
        case .forwarderEndpoint: forwarderEndpoints
        case .logRateLimit: [String(logRateLimit)]
        case .metricsConnections: [String(metricsConnections)]
        case .metricsTimeout: [String(metricsTimeout.milliseconds)]
        case .snapshotPageBytes: [String(snapshotPageBytes)]
        case .maxReplyBytes: [String(maxReplyBytes)]
        case .maxBooksPerLearner: [String(maxBooksPerLearner)]
        case .maxLibraryBytes: [String(maxLibraryBytes)]
        case .maxBatch: [String(maxBatch.milliseconds)]
        case .unknownServiceTimeout: [String(unknownServiceTimeout.milliseconds)]
        case .backupIdleLimit: [String(backupIdleLimit.milliseconds)]
        case .maxConnections: [String(maxConnections)]
        case .maxInputBytes: [String(maxInputBytes)]
        case .maxOutputBytes: [String(maxOutputBytes)]
        case .dashboardPort: [String(dashboardPort)]
        case .dashboardAddress: [dashboardAddress]
        case .dashboardToken: dashboardToken.map { [$0] } ?? []
        case .metricsAddress: [metricsAddress]
        case .metricsToken: metricsToken.map { [$0] } ?? []
        case .metricsTokenFile: metricsTokenFile.map { [$0] } ?? []
        case .curveSecretKey: curveSecretKey.map { [$0] } ?? []
        case .curveServerKey: curveServerKey.map { [$0] } ?? []
        case .authorizedKeys: authorizedKeys.map { [$0] } ?? []
        case .partitions: [String(partitions)]
        case .node: [node]
        case .insecure: [String(insecure)]
        case .join: [String(join)]
        case .replicas: [String(replicas)]
        case .etcdEndpoint: etcdEndpoints
        case .replicationEndpoint: replicationEndpoint.map { [$0] } ?? []
        case .leaseTTL: [String(leaseTTLSeconds)]
        case .leaseKeepAlive: [String(leaseKeepAlive.milliseconds)]
        case .leaseRetry: [String(leaseRetry.milliseconds)]
        }
    }

    /// Refuses combinations of values that are each valid but cannot work together, naming the
    /// setting and where its value came from.
    /// - Throws: `SettingsError` for the first conflict found.
    public func checkConflicts() throws(SettingsError) {
        func conflict(_ key: SettingKey, _ message: String) -> SettingsError {
            SettingsError(key: key, origin: origins[key] ?? .defaultValue, message: message)
        }
        if queueLimit > queueLimitTotal {
            throw conflict(.queueLimit, "\(queueLimit) exceeds queue-limit-total \(queueLimitTotal)")
        }
        if reconnectInitial > reconnectMaximum {
            throw conflict(.reconnectInitial, "\(reconnectInitial.milliseconds) ms exceeds reconnect-max \(reconnectMaximum.milliseconds) ms")
        }
        if metricsPort != 0, let clash = endpoints.first(where: { $0.hasPrefix("tcp://") && $0.hasSuffix(":\(metricsPort)") }) {
            throw conflict(.metricsPort, "port \(metricsPort) is also the broker endpoint \(clash)")
        }
        if metricsToken != nil, metricsTokenFile != nil {
            throw conflict(.metricsTokenFile, "metrics-token is set too (\(origins[.metricsToken] ?? .defaultValue)): give the token one way")
        }
        if metricsPort != 0, !metricsAddress.hasPrefix("127."), metricsBearerToken == nil {
            throw conflict(.metricsAddress, """
                \(metricsAddress) is not loopback, and /metrics shows every service's traffic: set metrics-token \
                (LYCEUM_METRICS_TOKEN) or metrics-token-file to a secret that scrapers send as Authorization: Bearer
                """)
        }
        if dashboardPort != 0, dashboardPort == metricsPort {
            throw conflict(.dashboardPort, "port \(dashboardPort) is also metrics-port")
        }
        if dashboardPort != 0, !dashboardAddress.hasPrefix("127."), dashboardToken == nil {
            throw conflict(.dashboardAddress, """
                \(dashboardAddress) is not loopback, and the dashboard shows learner ids: set dashboard-token \
                (LYCEUM_DASHBOARD_TOKEN) to a secret the page and the event stream will require
                """)
        }
        if dashboardPort != 0, !publishesEvents {
            throw conflict(.dashboardPort, "the dashboard shows events, and events-endpoint is none")
        }
        if (try? leaseTiming) == nil {
            // Named by the timing from the highest source: the one most likely just changed.
            let timings: [SettingKey] = [.leaseTTL, .leaseKeepAlive, .leaseRetry]
            let key = timings.max { (origins[$0]?.precedence ?? 0) < (origins[$1]?.precedence ?? 0) } ?? .leaseTTL
            throw conflict(key, """
                lease-keep-alive \(leaseKeepAlive.milliseconds) ms + 2 × lease-retry \(leaseRetry.milliseconds) ms exceeds \
                lease-ttl \(leaseTTLSeconds) s: a leader must stop acting before its lease can expire (keep-alive + 2 × retry ≤ ttl)
                """)
        }
        if replicas > 1 {
            if etcdEndpoints.isEmpty {
                throw conflict(.replicas, "\(replicas) replicas need etcd for their leaderships: give etcd-endpoint (LYCEUM_ETCD_ENDPOINT) once per etcd member")
            }
            if replicationEndpoint == nil {
                throw conflict(.replicas, "\(replicas) replicas need replication-endpoint (LYCEUM_REPLICATION_ENDPOINT), where the other replicas reach this one")
            }
            if partitions == 0 {
                throw conflict(.replicas, "\(replicas) replicas are replicas of partitions, and partitions is 0")
            }
        }
    }

    /// What a bearer token (`dashboard-token`, `metrics-token`) must be, as error messages say it.
    static let bearerTokenRule = "a token of at least 16 visible ASCII characters, without '&' or '%'"

    /// Whether `text` is a bearer token: visible ASCII only, since it travels in a header (and
    /// the dashboard's in a query string) as written, and long enough not to be guessed.
    static func isBearerToken(_ text: String) -> Bool {
        text.utf8.count >= 16 && text.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "%") }
    }

    /// A token file could not be used; `message` says why, never what it holds.
    struct TokenFileError: Error {
        let message: String
    }

    /// The token in the file at `path`: its first line, which must be a bearer token, in a file
    /// that neither group nor others may read (like a secret certificate).
    static func readToken(at path: String) throws(TokenFileError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw TokenFileError(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw TokenFileError(message: "\(path) is not a regular file")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw TokenFileError(message: "\(path) is readable by group or others (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 it")
        }
        // A token is short: more than a page is not a token file.
        var bytes = [UInt8](repeating: 0, count: 4097)
        let count = read(descriptor, &bytes, bytes.count)
        guard count >= 0 else { throw TokenFileError(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
        let line = bytes[..<count].split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        let token = String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        guard count < bytes.count, isBearerToken(token) else {
            throw TokenFileError(message: "\(path) does not hold \(bearerTokenRule) on its first line")
        }
        return token
    }

    /// Worker sessions per service: at least one, and few enough that the broker's queues stay the bound.
    public static let sessionRange = 1...64
    /// Replica set sizes: 1 (unreplicated) up to 7.
    public static let replicaRange = 1...7
    /// `call` timeouts in milliseconds: up to ten minutes.
    public static let timeoutRange = 1...600_000
    /// Per-connection byte budgets: from 64 KiB (one request and its framing) to 1 GiB.
    public static let byteBudgetRange = (64 << 10)...(1 << 30)

    /// The host name's identifier characters (at most ``Identifier/maximumLength``), or `node`
    /// when none is left: the default node name.
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "node" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }.filter(Identifier.isAllowed), as: UTF8.self)
        return name.isEmpty ? "node" : String(name.prefix(Identifier.maximumLength))
    }()

    /// The port of a replication endpoint `tcp://ADDRESS:PORT`; `nil` when `text` is not one.
    public static func replicationPort(of text: String) -> Int? {
        guard text.hasPrefix("tcp://"), let colon = text.lastIndex(of: ":"), colon > text.index(text.startIndex, offsetBy: 6),
            let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port)
        else { return nil }
        return port
    }

    private static func isEndpoint(_ text: String) -> Bool {
        ["tcp://", "ipc://", "inproc://"].contains { text.hasPrefix($0) && text.count > $0.count }
    }
}

/// The name of one setting, as written after `--` on the command line and as a key in a
/// configuration file; its environment variable is `LYCEUM_` and the name in capitals with `_`.
public enum SettingKey: String, CaseIterable, Sendable {
    /// `Settings.endpoints`.
    case endpoint
    /// `Settings.brokers`.
    case broker
    /// `Settings.dataDirectory`.
    case data
    /// `Settings.catalogPaths`.
    case catalog
    /// `Settings.services`.
    case service
    /// `Settings.sessionsPerService`.
    case sessions
    /// `Settings.durability`.
    case durability
    /// `Settings.timeout`.
    case timeout
    /// `Settings.logLevel`.
    case logLevel = "log-level"
    /// `Settings.logFormat`.
    case logFormat = "log-format"
    /// `Settings.metricsPort`.
    case metricsPort = "metrics-port"
    /// `Settings.heartbeatInterval`.
    case heartbeatInterval = "heartbeat-interval"
    /// `Settings.heartbeatLiveness`.
    case heartbeatLiveness = "heartbeat-liveness"
    /// `Settings.mdp`.
    case mdp
    /// `Settings.reconnectInitial`.
    case reconnectInitial = "reconnect-initial"
    /// `Settings.reconnectMaximum`.
    case reconnectMaximum = "reconnect-max"
    /// `Settings.queueLimit`.
    case queueLimit = "queue-limit"
    /// `Settings.queueLimitTotal`.
    case queueLimitTotal = "queue-limit-total"
    /// `Settings.highWaterMark`.
    case highWaterMark = "hwm"
    /// `Settings.receiveHighWaterMark`.
    case receiveHighWaterMark = "receive-hwm"
    /// `Settings.eventsEndpoint`.
    case eventsEndpoint = "events-endpoint"
    /// `Settings.snapshotEndpoint`.
    case snapshotEndpoint = "snapshot-endpoint"
    /// `Settings.forwarderEndpoints`.
    case forwarderEndpoint = "forwarder-endpoint"
    /// `Settings.logRateLimit`.
    case logRateLimit = "log-rate-limit"
    /// `Settings.metricsConnections`.
    case metricsConnections = "metrics-connections"
    /// `Settings.metricsTimeout`.
    case metricsTimeout = "metrics-timeout"
    /// `Settings.metricsAddress`.
    case metricsAddress = "metrics-address"
    /// `Settings.metricsToken`.
    case metricsToken = "metrics-token"
    /// `Settings.metricsTokenFile`.
    case metricsTokenFile = "metrics-token-file"
    /// `Settings.snapshotPageBytes`.
    case snapshotPageBytes = "snapshot-page-bytes"
    /// `Settings.maxReplyBytes`.
    case maxReplyBytes = "max-reply-bytes"
    /// `Settings.maxBooksPerLearner`.
    case maxBooksPerLearner = "max-books-per-learner"
    /// `Settings.maxLibraryBytes`.
    case maxLibraryBytes = "max-library-bytes"
    /// `Settings.maxBatch`.
    case maxBatch = "max-batch-ms"
    /// `Settings.unknownServiceTimeout`.
    case unknownServiceTimeout = "unknown-service-timeout"
    /// `Settings.backupIdleLimit`.
    case backupIdleLimit = "backup-idle-limit"
    /// `Settings.maxConnections`.
    case maxConnections = "max-connections"
    /// `Settings.maxInputBytes`.
    case maxInputBytes = "max-input-bytes"
    /// `Settings.maxOutputBytes`.
    case maxOutputBytes = "max-output-bytes"
    /// `Settings.dashboardPort`.
    case dashboardPort = "dashboard-port"
    /// `Settings.dashboardAddress`.
    case dashboardAddress = "dashboard-address"
    /// `Settings.dashboardToken`.
    case dashboardToken = "dashboard-token"
    /// `Settings.curveSecretKey`.
    case curveSecretKey = "curve-secret-key"
    /// `Settings.curveServerKey`.
    case curveServerKey = "curve-server-key"
    /// `Settings.authorizedKeys`.
    case authorizedKeys = "authorized-keys"
    /// `Settings.partitions`.
    case partitions
    /// `Settings.node`.
    case node
    /// `Settings.insecure`: a switch on the command line, `true` or `false` elsewhere.
    case insecure
    /// `Settings.join`: a switch on the command line, `true` or `false` elsewhere.
    case join
    /// `Settings.replicas`.
    case replicas
    /// `Settings.etcdEndpoints`.
    case etcdEndpoint = "etcd-endpoint"
    /// `Settings.replicationEndpoint`.
    case replicationEndpoint = "replication-endpoint"
    /// `Settings.leaseTTLSeconds`.
    case leaseTTL = "lease-ttl"
    /// `Settings.leaseKeepAlive`.
    case leaseKeepAlive = "lease-keep-alive"
    /// `Settings.leaseRetry`.
    case leaseRetry = "lease-retry"

    /// Whether the setting takes several values, one per occurrence.
    public var isRepeatable: Bool { [.endpoint, .broker, .catalog, .service, .forwarderEndpoint, .etcdEndpoint].contains(self) }

    /// Whether the setting is a switch: given on the command line without a value, it is
    /// `true`; a configuration file may give it as a JSON boolean.
    public var isSwitch: Bool { [.insecure, .join].contains(self) }

    /// The flag, e.g. `--log-level`.
    public var flag: String { "--" + rawValue }

    /// The environment variable, e.g. `LYCEUM_LOG_LEVEL`.
    public var environmentVariable: String {
        "LYCEUM_" + String(rawValue.uppercased().map { $0 == "-" ? "_" : $0 })
    }
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
