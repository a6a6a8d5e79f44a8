#if canImport(Glibc)
import Glibc
#endif
import LyceumLifecycle
import LyceumLogging
import Synchronization

/// A minimal HTTP/1.1 server on one TCP address (`GET /metrics`, the dashboard), answering
/// with what its responder says: one thread of its own runs an ``HTTPLoop`` over every
/// connection, so the responder runs on this thread, never on the broker's, and no client can
/// hold it (see ``HTTPLoop`` for the bounds).
public final class HTTPEndpoint<Responder: HTTPResponder & Sendable>: Component {
    /// The port bound, resolved when 0 was asked for.
    public let port: Int
    /// The address bound, e.g. `127.0.0.1`.
    public let address: String
    private let name: String
    private let listener: Int32
    private let limits: HTTPLoop.Limits
    private let responder: Responder
    private let stopping = Atomic<Bool>(false)
    private let logger: Logger

    /// Binds `address:port` (0: any free port) at once, so a taken port fails at start; `name`
    /// and `setting` say what the endpoint is and which setting chose the port, for errors and logs.
    /// - Throws: ``HTTPEndpointError`` naming the address, the port and the system's reason.
    public init(name: String, setting: String, address: String, port: Int, limits: HTTPLoop.Limits, responder: Responder) throws(HTTPEndpointError) {
        var binding = sockaddr_in()
        binding.sin_family = sa_family_t(AF_INET)
        binding.sin_port = in_port_t(UInt16(port)).bigEndian
        func failure(_ operation: String, _ number: Int32) -> HTTPEndpointError {
            HTTPEndpointError(name: name, setting: setting, address: address, port: port, operation: operation, errno: number)
        }
        guard inet_pton(AF_INET, address, &binding.sin_addr) == 1 else { throw failure("parse the IPv4 address", EINVAL) }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw failure("socket", errno) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &binding) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, SOMAXCONN) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            let error = failure("bind", errno)
            close(descriptor)
            throw error
        }
        self.port = Int(UInt16(bigEndian: binding.sin_port))
        self.address = address
        self.name = name
        listener = descriptor
        self.limits = limits
        self.responder = responder
        logger = Logger(component: name)
    }

    deinit { close(listener) }

    /// Answers requests until ``shutdown()``.
    public func run() throws {
        logger.info("\(name) listening", [
            "endpoint": "http://\(address):\(port)/", "max_connections": String(limits.maxConnections),
            "request_timeout_ms": String(limits.requestTimeout.milliseconds),
        ])
        var loop = HTTPLoop(listener: listener, limits: limits, name: name, logger: logger)
        defer { loop.closeAll() }
        while !stopping.load(ordering: .relaxed) {
            loop.turn(responder: responder)
        }
    }

    /// Stops answering within a tenth of a second; open connections are closed unanswered.
    public func shutdown() { stopping.store(true, ordering: .relaxed) }
}

/// An HTTP endpoint's port could not be bound.
public struct HTTPEndpointError: Error, Sendable, CustomStringConvertible {
    /// What the endpoint is: `metrics`, `dashboard`.
    public let name: String
    /// The setting that chose the port, e.g. `metrics-port`.
    public let setting: String
    /// The address asked for.
    public let address: String
    /// The port asked for.
    public let port: Int
    /// The system call that failed.
    public let operation: String
    /// The system's error number.
    public let errno: Int32

    /// `cannot bind 127.0.0.1:9100 for metrics (--metrics-port): Address already in use`.
    public var description: String {
        "cannot \(operation) \(address):\(port) for \(name) (--\(setting)): \(String(cString: strerror(errno)))"
    }
}
