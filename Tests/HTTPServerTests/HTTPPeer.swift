#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import LyceumLifecycle
import LyceumTestSupport

/// A test's HTTP endpoint on a loopback port of its own, run on a thread, with a responder that
/// answers a well-formed request `200` with its path and query, and any other `400`.
final class TestEndpoint {
    let port: Int
    private let thread: ComponentThread

    init(limits: HTTPLoop.Limits = HTTPLoop.Limits(maxConnections: 8, requestTimeout: .seconds(30))) throws {
        let endpoint = try HTTPEndpoint(name: "test-http", setting: "test-port", address: "127.0.0.1", port: 0, limits: limits, responder: EchoResponder())
        port = endpoint.port
        thread = ComponentThread(endpoint, name: "test-http")
    }

    deinit { thread.stop() }

    /// Sends `request` on a connection of its own and returns all that comes back.
    func exchange(_ request: String) throws -> String {
        let peer = try RawPeer(port: port)
        try peer.send(request)
        return try peer.readToEnd()
    }
}

/// Answers what the request was, as the endpoint parsed it.
struct EchoResponder: HTTPResponder, Sendable {
    func response(to request: HTTPRequest) -> HTTPResponse {
        guard request.isWellFormed else { return .complete(status: "400 Bad Request", type: "text/plain", body: Array("bad request\n".utf8)) }
        let query = request.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        let agent = request.headers["user-agent"] ?? ""
        return .complete(status: "200 OK", type: "text/plain", body: Array("\(request.method) \(request.path) \(query) \(agent)".utf8))
    }

    var streamWakeDescriptor: Int32? { nil }
    func takeStreamChunks() -> [(position: UInt64, bytes: [UInt8])] { [] }
    var keepAlive: [UInt8] { [] }
}

/// A raw TCP peer of the endpoint, blocking with the hang limit on every read, so that a test
/// sends exactly the bytes it means to (a slow, oversized or malformed request).
final class RawPeer {
    private let descriptor: Int32

    /// Connects to `127.0.0.1:port`.
    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let limit = Duration.hangLimit.components.seconds
        var timeout = timeval(tv_sec: Int(limit), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw PeerError(what: "connect to port \(port): errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// Sends all of `text`.
    func send(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw PeerError(what: "send: errno \(errno)") }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// Closes the sending side: the endpoint reads the end of the request.
    func closeWriting() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Everything the endpoint sends until it closes the connection.
    /// - Throws: `PeerError` when nothing ends the connection within the hang limit.
    func readToEnd() throws -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return String(decoding: received, as: UTF8.self) }
            if count < 0 {
                if errno == EINTR { continue }
                // A reset after the response (the peer closed with our bytes unread) ends it too.
                if errno == ECONNRESET { return String(decoding: received, as: UTF8.self) }
                throw PeerError(what: "recv: errno \(errno)")
            }
            received += buffer[..<count]
        }
    }
}

/// A raw peer's operation failed.
struct PeerError: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}
