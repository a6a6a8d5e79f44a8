/// What an ``HTTPResponder`` answers a request with.
public enum HTTPResponse: Sendable {
    /// A whole response; the connection closes once it is sent.
    case complete([UInt8])
    /// A response that stays open: `head` (status line, headers and the first bytes of the
    /// body) now, then every chunk the responder posts after `position`, until either side closes.
    case stream(head: [UInt8], position: UInt64)

    /// A whole response with `status` (e.g. `200 OK`), a body of `type`, and `headers` besides
    /// the length and `Connection: close`.
    public static func complete(status: String, type: String, body: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        .complete(Array(head(status: status, type: type, headers: headers + [("Content-Length", String(body.count))]).utf8) + body)
    }

    /// `431`: the request line and headers passed ``HTTPConnection/maxRequestBytes``.
    static var tooLarge: [UInt8] {
        let body = "request line and headers over \(HTTPConnection.maxRequestBytes) bytes\n"
        guard case .complete(let bytes) = complete(status: "431 Request Header Fields Too Large", type: "text/plain", body: Array(body.utf8)) else { return [] }
        return bytes
    }

    /// The status line and headers, through the empty line; `Connection: close` always, since
    /// each connection carries one exchange.
    public static func head(status: String, type: String, headers: [(String, String)]) -> String {
        var text = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "Connection: close\r\n\r\n"
    }
}

/// What an ``HTTPLoop`` asks of the endpoint it serves: a response to each request, and for
/// endpoints with streams, the chunks to send on them. Called on the loop's thread only.
public protocol HTTPResponder {
    /// The response to a complete request (or to what a peer sent before closing its side).
    func response(to request: HTTPRequest) -> HTTPResponse
    /// A descriptor that becomes readable when chunks are posted; `nil` when there are no streams.
    var streamWakeDescriptor: Int32? { get }
    /// The chunks posted since the last call, each with its position (increasing), and empties
    /// the wake-up descriptor. A stream receives the chunks whose position is above its own.
    func takeStreamChunks() -> [(position: UInt64, bytes: [UInt8])]
    /// What an open stream is sent after ``HTTPLoop/Limits/keepAliveInterval`` without bytes,
    /// so that idle peers and proxies keep it open and a vanished peer is noticed.
    var keepAlive: [UInt8] { get }
}
