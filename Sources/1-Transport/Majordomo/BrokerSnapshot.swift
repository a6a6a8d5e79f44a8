/// What a broker holds at one moment: its services, their workers and queues. Management
/// answers and metrics are built from it; it never includes request bodies.
public struct BrokerSnapshot: Sendable, Equatable {
    /// One service as the broker sees it.
    public struct Service: Sendable, Equatable {
        /// The service name.
        public let name: String
        /// Workers registered for the service.
        public let workers: Int
        /// Of those, workers waiting for a request.
        public let idleWorkers: Int
        /// Requests queued for the service, not yet given to a worker; for a local service,
        /// requests waiting for their deferred reply.
        public let queuedRequests: Int
        /// Whether the broker answers the service itself (a ``LocalService``), without workers.
        public let isLocal: Bool

        /// A service's counts.
        public init(name: String, workers: Int, idleWorkers: Int, queuedRequests: Int, isLocal: Bool = false) {
            self.name = name
            self.workers = workers
            self.idleWorkers = idleWorkers
            self.queuedRequests = queuedRequests
            self.isLocal = isLocal
        }
    }

    /// The broker's TCP connections and what its ``BrokerConfiguration`` limits did to them.
    public struct Connections: Sendable, Equatable {
        /// Connections held now.
        public var open = 0
        /// Connections cut as they were accepted, beyond `maxConnections`, since the start.
        public var refused = 0
        /// Connections cut over `maxInputBytesPerConnection` since the start.
        public var cutForInput = 0
        /// Connections cut over `maxOutputBytesPerConnection` since the start.
        public var cutForOutput = 0

        /// Counts; each defaults to zero.
        public init(open: Int = 0, refused: Int = 0, cutForInput: Int = 0, cutForOutput: Int = 0) {
            self.open = open
            self.refused = refused
            self.cutForInput = cutForInput
            self.cutForOutput = cutForOutput
        }
    }

    /// The local services, and the services with a worker or a queued request, by name.
    public let services: [Service]
    /// The connections, as of the last housekeeping pass.
    public let connections: Connections
    /// A snapshot of `services` and `connections`.
    public init(services: [Service], connections: Connections = Connections()) {
        self.services = services
        self.connections = connections
    }

    /// Workers registered, all services together.
    public var workers: Int { services.reduce(0) { $0 + $1.workers } }
    /// Requests queued, all services together.
    public var queuedRequests: Int { services.reduce(0) { $0 + $1.queuedRequests } }

    /// A snapshot with no services, as before the broker runs.
    public static let empty = BrokerSnapshot(services: [])
}

/// Answers one `mmi.` management service from the broker's state; called on the broker's
/// thread, so it must be quick and must not block.
public typealias ManagementAnswer = @Sendable (_ snapshot: BrokerSnapshot, _ body: [[UInt8]]) -> [UInt8]
