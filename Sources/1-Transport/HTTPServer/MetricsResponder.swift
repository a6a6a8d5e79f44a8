import LyceumLifecycle
import LyceumSupport

/// The responses of the metrics port: `GET /metrics` gets the Prometheus text exposition that
/// `render` returns (on the endpoint's thread), with the bearer token when one is set;
/// `GET /healthz` and `GET /readyz` get the process's liveness and readiness, without a token
/// (they tell whether, not what); another method gets 405, another path 404.
public struct MetricsResponder: HTTPResponder, Sendable {
    /// The exposition, made when asked.
    public let render: @Sendable () -> String
    private let token: BearerToken?
    private let readiness: Readiness?
    private let watchdog: Watchdog?

    /// A responder answering `/metrics` with what `render` returns, to requests carrying `token`
    /// when it is set; `/readyz` with `readiness` and `/healthz` with `watchdog` (each ready or
    /// alive when not given).
    public init(token: String? = nil, readiness: Readiness? = nil, watchdog: Watchdog? = nil, render: @escaping @Sendable () -> String) {
        self.render = render
        self.token = token.map(BearerToken.init)
        self.readiness = readiness
        self.watchdog = watchdog
    }

    public func response(to request: HTTPRequest) -> HTTPResponse {
        guard request.isWellFormed else { return Self.text("400 Bad Request", "malformed request line\n") }
        guard request.method == "GET" else { return Self.text("405 Method Not Allowed", "only GET\n", [("Allow", "GET")]) }
        switch request.path {
        case "/metrics":
            guard token?.matches(BearerToken.presented(in: request)) ?? true else {
                return Self.text("401 Unauthorized", "/metrics needs its token: Authorization: Bearer <token>\n", [("WWW-Authenticate", "Bearer")])
            }
            return .complete(status: "200 OK", type: "text/plain; version=0.0.4; charset=utf-8", body: Array(render().utf8))
        case "/healthz":
            if let silence = watchdog?.silence() {
                return Self.json("503 Service Unavailable", #"{"status":"stalled","silent_ms":\#(silence.milliseconds)}"#)
            }
            return Self.json("200 OK", #"{"status":"alive"}"#)
        case "/readyz":
            switch readiness?.state ?? .ready {
            case .ready: return Self.json("200 OK", #"{"status":"ready"}"#)
            case .stopping: return Self.json("503 Service Unavailable", #"{"status":"stopping"}"#)
            case .waiting(let conditions):
                // The conditions are Readiness's own constants: plain text, nothing to escape.
                let list = conditions.map { "\"\($0)\"" }.joined(separator: ",")
                return Self.json("503 Service Unavailable", #"{"status":"waiting","waiting_for":[\#(list)]}"#)
            }
        default:
            return Self.text("404 Not Found", "only GET /metrics, /healthz and /readyz\n")
        }
    }

    /// None: the metrics port has no streams.
    public var streamWakeDescriptor: Int32? { nil }
    /// None: the metrics port has no streams.
    public func takeStreamChunks() -> [(position: UInt64, bytes: [UInt8])] { [] }
    /// Nothing: the metrics port has no streams.
    public var keepAlive: [UInt8] { [] }

    private static func text(_ status: String, _ body: String, _ headers: [(String, String)] = []) -> HTTPResponse {
        .complete(status: status, type: "text/plain; charset=utf-8", body: Array(body.utf8), headers: headers)
    }

    private static func json(_ status: String, _ body: String) -> HTTPResponse {
        // A probe's answer is never cached by a proxy between it and the prober.
        .complete(status: status, type: "application/json", body: Array((body + "\n").utf8), headers: [("Cache-Control", "no-store")])
    }
}
