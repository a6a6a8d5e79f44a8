import LyceumSupport

/// One etcd member's client URL as the gateway client reaches it: `http://HOST:PORT`. TLS is
/// not spoken: etcd members are reached on a private network (docs/cluster.md).
public struct GatewayEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// A host name or an IPv4/IPv6 address (without brackets).
    public let host: String
    /// The TCP port.
    public let port: UInt16

    /// Parses `http://HOST:PORT` (or `HOST:PORT`; `[v6]:PORT` for IPv6 addresses).
    public init(_ text: String) throws(CoordinationError) {
        do throws(HostPort.Refusal) {
            let address = try HostPort(url: text, scheme: "http")
            host = address.host
            port = address.port
        } catch {
            let reason = switch error {
            case .scheme(let scheme): "\(scheme) is not supported: give the member's http:// client URL"
            case .form: "expected http://HOST:PORT"
            case .port: "the port must be 1–65535"
            }
            throw CoordinationError(.badEndpoint, endpoint: text, operation: "parse", detail: reason)
        }
    }

    /// `http://HOST:PORT`.
    public var description: String { host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)" }
}

/// How long and how much the gateway client waits for and accepts from etcd, so that a broken
/// or hostile endpoint can neither hang a caller nor exhaust its memory.
public struct GatewayLimits: Sendable, Equatable {
    /// The longest a TCP connection may take to be established.
    public var connectTimeout: Duration
    /// The longest one unary call (request sent, whole response read) may take.
    public var requestTimeout: Duration
    /// The largest response head (status line and headers).
    public var maxHeadBytes: Int
    /// The largest body of a unary response.
    public var maxBodyBytes: Int
    /// The largest single message of a stream (one watch response).
    public var maxMessageBytes: Int

    /// Limits for a leader key and a few partition keys: small answers, quick failure.
    public init(
        connectTimeout: Duration = .seconds(1), requestTimeout: Duration = .seconds(2),
        maxHeadBytes: Int = 16 << 10, maxBodyBytes: Int = 4 << 20, maxMessageBytes: Int = 1 << 20
    ) {
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxMessageBytes = maxMessageBytes
    }
}
