#if canImport(Glibc)
import Glibc
#endif
import LyceumLifecycle
import LyceumLogging
import Synchronization

/// A minimal HTTP/1.0 responder on a loopback TCP port: `GET /metrics` answers with the
/// Prometheus text exposition that `render` returns; anything else gets 404 or 405.
///
/// One thread of its own serves every connection through one `poll`, on non-blocking sockets,
/// so that no client can hold it: each connection has ``Limits/requestTimeout`` for the whole
/// exchange (not per read), at most ``Limits/maxConnections`` are open, and a new one beyond
/// that closes the one idle the longest. `render` runs on this thread, never on the broker's.
/// When the process is out of descriptors, a descriptor kept in reserve is given up to accept
/// one scrape at a time; past that the endpoint stops accepting for a growing pause (never a
/// busy loop) and keeps serving the connections it has.
public final class MetricsEndpoint: Service {
    /// The bounds on the endpoint's connections.
    public struct Limits: Sendable, Equatable {
        /// Connections open at once; a new one beyond them closes the one idle the longest.
        public var maxConnections: Int
        /// Time from accepting a connection to having sent its response; it is closed then.
        public var requestTimeout: Duration

        /// 32 connections, 2 seconds each.
        public init(maxConnections: Int = 32, requestTimeout: Duration = .seconds(2)) {
            self.maxConnections = maxConnections
            self.requestTimeout = requestTimeout
        }
    }

    /// The port bound, resolved when 0 was asked for.
    public let port: Int
    private let listener: Int32
    private let limits: Limits
    private let render: @Sendable () -> String
    private let stopping = Atomic<Bool>(false)
    private let logger = Logger(component: "metrics")

    /// Binds `127.0.0.1:port` (0: any free port) at once, so a taken port fails at start.
    /// - Throws: `MetricsEndpointError` naming the port and the system's reason.
    public init(port: Int, limits: Limits = Limits(), render: @escaping @Sendable () -> String) throws(MetricsEndpointError) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw MetricsEndpointError(port: port, operation: "socket", errno: errno) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, SOMAXCONN) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            let failure = MetricsEndpointError(port: port, operation: "bind", errno: errno)
            close(descriptor)
            throw failure
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        listener = descriptor
        self.limits = limits
        self.render = render
    }

    deinit { close(listener) }

    /// Answers requests until ``shutdown()``.
    public func run() throws {
        logger.info("metrics listening", [
            "endpoint": "http://127.0.0.1:\(port)/metrics", "max_connections": String(limits.maxConnections),
            "request_timeout_ms": String(limits.requestTimeout.milliseconds),
        ])
        var loop = MetricsLoop(listener: listener, limits: limits, logger: logger)
        defer { loop.closeAll() }
        while !stopping.load(ordering: .relaxed) {
            loop.turn(render: render)
        }
    }

    /// Stops answering within a tenth of a second; open connections are closed unanswered.
    public func shutdown() { stopping.store(true, ordering: .relaxed) }
}

/// The metrics port could not be bound.
public struct MetricsEndpointError: Error, Sendable, CustomStringConvertible {
    /// The port asked for.
    public let port: Int
    /// The system call that failed.
    public let operation: String
    /// The system's error number.
    public let errno: Int32

    /// `cannot bind 127.0.0.1:9100 for metrics: Address already in use`.
    public var description: String {
        "cannot \(operation) 127.0.0.1:\(port) for metrics (--metrics-port): \(String(cString: strerror(errno)))"
    }
}
