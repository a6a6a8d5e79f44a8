/// The responses of the `/metrics` endpoint: `GET /metrics` gets the Prometheus text
/// exposition that `render` returns (on the endpoint's thread); another method gets 405,
/// another path 404.
public struct MetricsResponder: HTTPResponder, Sendable {
    /// The exposition, made when asked.
    public let render: @Sendable () -> String

    /// A responder answering with what `render` returns.
    public init(render: @escaping @Sendable () -> String) { self.render = render }

    public func response(to request: HTTPRequest) -> HTTPResponse {
        if request.method == "GET", request.path == "/metrics" {
            return .complete(status: "200 OK", type: "text/plain; version=0.0.4; charset=utf-8", body: Array(render().utf8))
        } else if !request.method.isEmpty, request.method != "GET" {
            return .complete(status: "405 Method Not Allowed", type: "text/plain", body: Array("only GET /metrics\n".utf8))
        }
        return .complete(status: "404 Not Found", type: "text/plain", body: Array("only GET /metrics\n".utf8))
    }

    /// None: `/metrics` has no streams.
    public var streamWakeDescriptor: Int32? { nil }
    /// None: `/metrics` has no streams.
    public func takeStreamChunks() -> [(position: UInt64, bytes: [UInt8])] { [] }
    /// Nothing: `/metrics` has no streams.
    public var keepAlive: [UInt8] { [] }
}
