import EventSubscription
import ZeroMQ

/// Where an ``EventPublisher`` publishes and serves snapshots, and its bounds.
public struct EventPublisherConfiguration: Sendable {
    /// Endpoints the PUB socket binds, for subscribers to connect to, e.g. `tcp://127.0.0.1:5556`.
    public var publishEndpoints: [String]
    /// Forwarders' XSUB endpoints the PUB socket connects to, when workers publish through a broker.
    public var forwarderEndpoints: [String]
    /// Endpoints the snapshot ROUTER binds.
    public var snapshotEndpoints: [String]
    /// The snapshot endpoint heartbeats advertise, for subscribers that reach this publisher
    /// through a forwarder; `nil` advertises the first bound snapshot endpoint as resolved.
    public var advertisedSnapshotEndpoint: String?
    /// Messages queued per subscriber before the PUB socket drops that subscriber's messages.
    public var sendHighWaterMark: Int32
    /// Events waiting for the publisher thread before publishes are dropped (counted, and seen
    /// by subscribers as a sequence gap) rather than held.
    public var queueCapacity: Int
    /// Time between heartbeats.
    public var heartbeatInterval: Duration
    /// How progress events become xAPI statements on `xapi/…`; `nil` publishes none.
    public var xapi: XAPIOptions?
    /// The most bytes of one snapshot reply body (a page holds at least one entry, however
    /// large); within ``SnapshotProtocol/pageBytesRange``.
    public var snapshotPageBytes: Int
    /// The XPUB socket's security: a CURVE server (ZAP domain `lyceum.events`) where it binds
    /// for subscribers, a CURVE client of the forwarder's server key where it connects to a
    /// forwarder. Default: plaintext.
    public var publisherSecurity: SocketSecurity = .plaintext
    /// The snapshot ROUTER's security: a CURVE server (ZAP domain `lyceum.snapshots`) when
    /// CURVE is on. Default: plaintext.
    public var snapshotSecurity: SocketSecurity = .plaintext

    /// The Z85 text of the snapshot ROUTER's CURVE public key, which heartbeats advertise beside
    /// its endpoint; `nil` when it is plaintext.
    var advertisedSnapshotKey: String? {
        guard case .curveServer(let keys, _) = snapshotSecurity else { return nil }
        return try? Z85.encode(keys.publicKey)
    }

    /// A configuration; every endpoint list may be empty except that a publisher with neither
    /// publish nor forwarder endpoints reaches nobody.
    public init(
        publishEndpoints: [String] = [], forwarderEndpoints: [String] = [], snapshotEndpoints: [String] = [],
        advertisedSnapshotEndpoint: String? = nil, sendHighWaterMark: Int32 = 10_000, queueCapacity: Int = 100_000,
        heartbeatInterval: Duration = .seconds(1), xapi: XAPIOptions? = XAPIOptions(),
        snapshotPageBytes: Int = SnapshotProtocol.defaultPageBytes
    ) {
        self.publishEndpoints = publishEndpoints
        self.forwarderEndpoints = forwarderEndpoints
        self.snapshotEndpoints = snapshotEndpoints
        self.advertisedSnapshotEndpoint = advertisedSnapshotEndpoint
        self.sendHighWaterMark = sendHighWaterMark
        self.queueCapacity = queueCapacity
        self.heartbeatInterval = heartbeatInterval
        self.xapi = xapi
        self.snapshotPageBytes = snapshotPageBytes
    }
}
