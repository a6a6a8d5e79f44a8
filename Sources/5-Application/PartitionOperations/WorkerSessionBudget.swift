/// Whether a worker process's sessions fit what one process may open. Each session is a libzmq
/// DEALER socket with its connection (two descriptors, measured), and each service instance
/// costs up to six more (its journal's file and lock; counted once per broker, which errs on the
/// safe side). A partitioned worker multiplies `sessions` by the partitions it holds and by its
/// brokers: 64 partitions of two services at the default 16 sessions would open 2,048 sockets, past
/// libzmq's 1,023 per context, and fail socket by socket while starting; it is refused first,
/// with the `sessions` that fits. A partition moving in is checked the same way before any of it
/// is received.
public struct WorkerSessionBudget: Sendable {
    /// libzmq's default `ZMQ_MAX_SOCKETS` for a context.
    static let socketsPerContext = 1023
    /// Sockets kept for the rest of the process: the event publisher's, the ZAP handler's, monitors.
    static let reservedSockets = 32
    /// Descriptors kept for the rest of the process, and per session and per instance (measured
    /// on Linux with libzmq 4.3.4: 2 and 6, rounded up).
    static let reservedDescriptors = 64
    static let descriptorsPerSession = 2
    static let descriptorsPerInstance = 8

    /// The brokers every instance registers with.
    let brokers: Int
    /// Sessions per instance and broker (`sessions`).
    let sessions: Int
    /// The process's descriptor limit.
    let descriptorLimit: Int

    /// The budget of a worker registering with `brokers` brokers, `sessions` sessions per
    /// instance and broker, under the descriptor limit `descriptorLimit`.
    public static func of(brokers: Int, sessions: Int, descriptorLimit: Int) -> WorkerSessionBudget {
        WorkerSessionBudget(brokers: brokers, sessions: sessions, descriptorLimit: descriptorLimit)
    }

    /// Why `instances` service instances (one per partition held, plus the unpartitioned ones and
    /// the node service), each registered with every broker, do not fit, naming the `sessions`
    /// that would; `nil` when they fit.
    public func refusal(instances: Int) -> String? {
        let registrations = instances * brokers
        let largest = min(
            (Self.socketsPerContext - Self.reservedSockets) / registrations,
            (descriptorLimit - Self.reservedDescriptors - Self.descriptorsPerInstance * registrations) / (Self.descriptorsPerSession * registrations))
        guard sessions > largest else { return nil }
        let total = registrations * sessions
        guard largest >= 1 else {
            return "\(registrations) registrations (service instances, one per partition held, × brokers) do not fit one process even at 1 session each "
                + "(libzmq allows \(Self.socketsPerContext) sockets, the descriptor limit is \(descriptorLimit)): hold fewer partitions"
        }
        return "\(registrations) registrations (service instances, one per partition held, × brokers) × \(sessions) sessions = \(total) sockets do not fit one process "
            + "(libzmq allows \(Self.socketsPerContext) sockets, the descriptor limit is \(descriptorLimit)): use --sessions \(largest) or less"
    }
}
