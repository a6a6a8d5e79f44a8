import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP exchange with a loopback port over a plain socket, so that a test can send what no
/// HTTP client would.
public enum HTTPExchange {
    /// What came back: the status code, the head (status line and headers) and the body.
    public struct Answer: CustomStringConvertible {
        public let status: Int
        public let head: String
        public let body: String
        public var description: String { "\(head)\n\n\(body.prefix(300))" }
    }

    /// `GET path` with `headers`.
    public static func get(_ path: String, port: Int, headers: [String] = []) throws -> Answer {
        try exchange(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers.map { $0 + "\r\n" }.joined())\r\n".utf8), port: port)
    }

    /// Sends `request` (as much of it as the server takes before it answers) and reads the
    /// answer to the end (the server closes every connection).
    public static func exchange(_ request: [UInt8], port: Int) throws -> Answer {
        let descriptor = try connectToLoopback(port: port)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // A server that answered early closes, and stops taking the rest: read its answer.
            guard written > 0 else { break }
            sent += written
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return Answer(status: status, head: head, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}

/// A TCP connection to `127.0.0.1:port`; the caller closes it.
public func connectToLoopback(port: Int) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port)).bigEndian
    let connected = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard connected else {
        close(descriptor)
        throw POSIXError(.ECONNREFUSED)
    }
    return descriptor
}
