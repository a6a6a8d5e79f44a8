#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.0 exchange of ``MetricsEndpoint``, on a non-blocking socket: the request is read
/// up to its empty line (at most ``maxRequestBytes``), then the response is written, then the
/// connection is closed. Each step does what the socket allows without waiting, so that one
/// slow peer never holds the endpoint's thread.
struct MetricsConnection {
    /// Bytes of request line and headers read before answering regardless.
    static let maxRequestBytes = 16_384

    /// What the connection waits for.
    enum Phase: Equatable {
        /// More of the request.
        case reading
        /// The socket to take more of the response.
        case writing
        /// Nothing: it is to be closed.
        case done
    }

    let descriptor: Int32
    /// When the whole exchange must be over; the connection is closed then, whatever its phase.
    let deadline: ContinuousClock.Instant
    /// When bytes last moved; the idlest connection is the first closed when the endpoint is full.
    private(set) var lastActivity: ContinuousClock.Instant
    private(set) var phase = Phase.reading
    private var request: [UInt8] = []
    private var response: [UInt8] = []
    private var sent = 0

    init(descriptor: Int32, accepted: ContinuousClock.Instant, timeout: Duration) {
        self.descriptor = descriptor
        deadline = accepted + timeout
        lastActivity = accepted
    }

    /// The events to poll for in the current phase.
    var pollEvents: Int16 { Int16(phase == .writing ? POLLOUT : POLLIN) }

    /// Reads what has arrived and, once the request is complete, builds the response with
    /// `render` and starts writing it.
    mutating func receive(now: ContinuousClock.Instant, render: () -> String) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while phase == .reading {
            let received = recv(descriptor, &buffer, min(buffer.count, Self.maxRequestBytes - request.count), Int32(MSG_DONTWAIT))
            if received < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { phase = .done }
                return
            }
            lastActivity = now
            // A peer that closes its side early still gets an answer to what it sent.
            let searchFrom = Swift.max(0, request.count - 3)
            if received > 0 { request += buffer[..<received] }
            if received == 0 || request.count >= Self.maxRequestBytes || request.containsHeaderEnd(from: searchFrom) {
                response = Array(Self.response(to: request, render: render).utf8)
                phase = .writing
                send(now: now)
            }
        }
    }

    /// Writes as much of the response as the socket takes; the phase is `.done` once all is sent.
    mutating func send(now: ContinuousClock.Instant) {
        while phase == .writing, sent < response.count {
            let written = response[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { phase = .done }
                return
            }
            sent += written
            lastActivity = now
        }
        if phase == .writing { phase = .done }
    }

    /// `200` with the exposition for `GET /metrics`, `405` for another method, `404` otherwise.
    static func response(to request: [UInt8], render: () -> String) -> String {
        let line = String(decoding: request.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self).split(separator: " ")
        if line.count >= 2, line[0] == "GET", line[1] == "/metrics" || line[1].hasPrefix("/metrics?") {
            return response(status: "200 OK", type: "text/plain; version=0.0.4; charset=utf-8", body: render())
        } else if line.count >= 2, line[0] != "GET" {
            return response(status: "405 Method Not Allowed", type: "text/plain", body: "only GET /metrics\n")
        }
        return response(status: "404 Not Found", type: "text/plain", body: "only GET /metrics\n")
    }

    private static func response(status: String, type: String, body: String) -> String {
        "HTTP/1.0 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
    }
}

extension [UInt8] {
    /// Whether `\r\n\r\n` starts at or after `start`: each read searches only what it added.
    fileprivate func containsHeaderEnd(from start: Int) -> Bool {
        count >= 4 && (start..<(count - 3)).contains { self[$0] == 0x0D && self[$0 + 1] == 0x0A && self[$0 + 2] == 0x0D && self[$0 + 3] == 0x0A }
    }
}
