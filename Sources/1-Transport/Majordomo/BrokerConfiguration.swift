import Access
import LyceumLifecycle
import ZeroMQ

/// Timings, bounds and security of a ``Broker``; every default is documented in `protocol/majordomo.md`.
public struct BrokerConfiguration: Sendable {
    /// Heartbeats sent to workers, and the silence after which an idle worker is purged.
    /// Default: 2500 ms × 3.
    public var heartbeat: Heartbeat
    /// How long a worker may hold a request without a word before it is presumed dead and
    /// purged, so that a worker killed mid-request does not stay registered. A worker that
    /// replies later gets DISCONNECT and registers again. Default: 60 s.
    public var maxRequestDuration: Duration
    /// How long a request waits for a worker of a service that has none before the client
    /// gets a `service_unknown` error reply. Default: 2000 ms.
    public var unknownServiceTimeout: Duration
    /// Requests queued for one service before more get a `queue_full` error reply. Default: 1000.
    public var maxQueuedRequestsPerService: Int
    /// Requests queued for all services together before more get an `overloaded`
    /// error reply. Default: 10 000.
    public var maxQueuedRequests: Int
    /// Workers registered at once; a READY beyond this gets DISCONNECT. Default: 10 000.
    public var maxWorkers: Int
    /// Largest frame accepted; a peer sending a larger one is disconnected by libzmq
    /// (`ZMQ_MAXMSGSIZE`). Default: 4 MiB.
    public var maxFrameSize: Int64
    /// Frames accepted in one message; longer messages are dropped. Default: 64.
    public var maxFramesPerMessage: Int
    /// ZeroMQ high-water mark of the broker's socket for replies (`ZMQ_SNDHWM`): messages queued
    /// per peer. Default: 1000, libzmq's.
    public var highWaterMark: Int32
    /// Messages from one peer that libzmq holds before the broker reads them (`ZMQ_RCVHWM`);
    /// past it libzmq stops reading that connection, so the peer is slowed, not dropped. Each
    /// can keep a whole receive buffer of libzmq's alive, so this bounds what a peer that sends
    /// faster than the broker reads can hold. Default: 100.
    public var receiveHighWaterMark: Int32
    /// Longest time the broker spends handling one batch of received messages before it sends
    /// the deferred replies posted meanwhile, wakes the journals and looks at its timers; with
    /// costly requests a batch then ends after the one in hand, so that a write's
    /// acknowledgement waits behind at most this much other work plus one request. Default: 2 ms.
    public var maxBatchDuration: Duration
    /// TCP connections held at once; one accepted beyond this is cut at once (the oldest
    /// connection that has sent no message yet goes first), so that descriptors never run out
    /// for libzmq. Default: 4096.
    public var maxConnections: Int
    /// Bytes one connection may have libzmq hold for it on the way in (a message in progress,
    /// messages not yet handled, the kernel's unread bytes) before it is cut. Default: 32 MiB.
    public var maxInputBytesPerConnection: UInt64
    /// Bytes sent to one connection that its peer has not yet acknowledged (replies it does not
    /// read) before it is cut. Default: 16 MiB.
    public var maxOutputBytesPerConnection: UInt64
    /// Extra management services the broker answers itself, by name (each starting `mmi.`),
    /// beside 8/MMI's `mmi.service`. Default: none.
    public var managementServices: [String: ManagementAnswer]
    /// Services the broker answers itself, without workers. Each holds at most
    /// `maxQueuedRequestsPerService` requests waiting for a deferred reply; more get `queue_full`.
    /// Default: none.
    public var localServices: [LocalService]
    /// Services whose requests are handed to other services by their body (``RoutedService``);
    /// a routed name may also be a local service, which then answers what is not routed.
    /// Default: none.
    public var routedServices: [RoutedService]
    /// How the broker's socket authenticates and encrypts its connections, applied before it
    /// binds. Default: plaintext.
    public var security: SocketSecurity
    /// Who the callers are: each message's `User-Id` (set by the process's ZAP handler) is looked
    /// up here, per message, so a key removed from the directory is refused from its next message
    /// on. `nil` turns the broker's rules off: every caller is `Caller.unverified`, as on a trusted
    /// network. With a directory, the broker enforces the roles (protocol/majordomo.md, "Callers
    /// and workers") and tells workers who called. Default: `nil`.
    public var keyDirectory: (any KeyDirectory)?
    /// The permission each service needs, by the start of its name (the application's policy;
    /// enforced only with a ``keyDirectory``). Default: `manage` for `mmi.*`, `callServices`
    /// for every other name.
    public var servicePermissions: ServicePermissions
    /// systemd's watchdog, petted on every pass of the broker's loop (which runs at least every
    /// 10 ms), so that a broker whose thread is wedged stops petting it. Default: none.
    public var watchdog: Watchdog?

    /// Creates a configuration; each argument defaults to the value documented on its property.
    public init(
        heartbeat: Heartbeat = Heartbeat(),
        maxRequestDuration: Duration = .seconds(60),
        unknownServiceTimeout: Duration = .milliseconds(2000),
        maxQueuedRequestsPerService: Int = 1000,
        maxQueuedRequests: Int = 10_000,
        maxWorkers: Int = 10_000,
        maxFrameSize: Int64 = 4 << 20,
        maxFramesPerMessage: Int = 64,
        highWaterMark: Int32 = 1000,
        receiveHighWaterMark: Int32 = 100,
        maxBatchDuration: Duration = .milliseconds(2),
        maxConnections: Int = 4096,
        maxInputBytesPerConnection: UInt64 = 32 << 20,
        maxOutputBytesPerConnection: UInt64 = 16 << 20,
        managementServices: [String: ManagementAnswer] = [:],
        localServices: [LocalService] = [],
        routedServices: [RoutedService] = [],
        security: SocketSecurity = .plaintext,
        keyDirectory: (any KeyDirectory)? = nil,
        servicePermissions: ServicePermissions = ServicePermissions()
    ) {
        self.heartbeat = heartbeat
        self.maxRequestDuration = maxRequestDuration
        self.unknownServiceTimeout = unknownServiceTimeout
        self.maxQueuedRequestsPerService = maxQueuedRequestsPerService
        self.maxQueuedRequests = maxQueuedRequests
        self.maxWorkers = maxWorkers
        self.maxFrameSize = maxFrameSize
        self.maxFramesPerMessage = maxFramesPerMessage
        self.highWaterMark = highWaterMark
        self.receiveHighWaterMark = receiveHighWaterMark
        self.maxBatchDuration = maxBatchDuration
        self.maxConnections = maxConnections
        self.maxInputBytesPerConnection = maxInputBytesPerConnection
        self.maxOutputBytesPerConnection = maxOutputBytesPerConnection
        self.managementServices = managementServices
        self.localServices = localServices
        self.routedServices = routedServices
        self.security = security
        self.keyDirectory = keyDirectory
        self.servicePermissions = servicePermissions
    }
}
