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

    /// The local services, and the services with a worker or a queued request, by name.
    public let services: [Service]
    /// A snapshot of `services`.
    public init(services: [Service]) { self.services = services }

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
