#if canImport(Glibc)
import Glibc
#endif
import Lifecycle
import Logging
import Synchronization

/// A minimal HTTP/1.0 responder on a loopback TCP port: `GET /metrics` answers with the
/// Prometheus text exposition that `render` returns; anything else gets 404 or 405. One
/// connection at a time, each closed after its response; a client that sends nothing within a
/// second is dropped, so no client can hold the endpoint.
public final class MetricsEndpoint: Service {
    /// The port bound, resolved when 0 was asked for.
    public let port: Int
    private let listener: Int32
    private let render: @Sendable () -> String
    private let stopping = Atomic<Bool>(false)
    private let logger = Logger(component: "metrics")

    /// Binds `127.0.0.1:port` (0: any free port) at once, so a taken port fails at start.
    /// - Throws: `MetricsEndpointError` naming the port and the system's reason.
    public init(port: Int, render: @escaping @Sendable () -> String) throws(MetricsEndpointError) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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
                bind(descriptor, generic, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            let failure = MetricsEndpointError(port: port, operation: "bind", errno: errno)
            close(descriptor)
            throw failure
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        listener = descriptor
        self.render = render
    }

    deinit { close(listener) }

    /// Answers requests until ``shutdown()``.
    public func run() throws {
        logger.info("metrics listening", ["endpoint": "http://127.0.0.1:\(port)/metrics"])
        while !stopping.load(ordering: .relaxed) {
            var poll = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, 100) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            answer(connection)
            close(connection)
        }
    }

    /// Stops answering within a tenth of a second.
    public func shutdown() { stopping.store(true, ordering: .relaxed) }

    private func answer(_ connection: Int32) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // The request line and headers end with an empty line; the body, if any, is ignored.
        while request.count < 16_384, !request.containsHeaderEnd {
            let received = recv(connection, &buffer, buffer.count, 0)
            guard received > 0 else { break }
            request += buffer[..<received]
        }
        let line = String(decoding: request.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self).split(separator: " ")
        let response: String
        if line.count >= 2, line[0] == "GET", line[1] == "/metrics" || line[1].hasPrefix("/metrics?") {
            response = Self.response(status: "200 OK", type: "text/plain; version=0.0.4; charset=utf-8", body: render())
        } else if line.count >= 2, line[0] != "GET" {
            response = Self.response(status: "405 Method Not Allowed", type: "text/plain", body: "only GET /metrics\n")
        } else {
            response = Self.response(status: "404 Not Found", type: "text/plain", body: "only GET /metrics\n")
        }
        let bytes = Array(response.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    private static func response(status: String, type: String, body: String) -> String {
        "HTTP/1.0 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
    }
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

extension [UInt8] {
    fileprivate var containsHeaderEnd: Bool {
        count >= 4 && indices.dropLast(3).contains { self[$0] == 0x0D && self[$0 + 1] == 0x0A && self[$0 + 2] == 0x0D && self[$0 + 3] == 0x0A }
    }
}
