/// A TCP address written `HOST:PORT` (an IPv6 address in brackets: `[::1]:2379`), optionally
/// after `SCHEME://` and before a final `/`: how an etcd member's client URL is given. It is
/// parsed here, below both, so that the `etcd-endpoint` setting is checked by the rule the etcd
/// client applies (`Coordination.GatewayEndpoint`) without the settings linking that client.
public struct HostPort: Sendable, Hashable {
    /// A host name or an IPv4/IPv6 address (without brackets).
    public let host: String
    /// The TCP port, 1–65535.
    public let port: UInt16

    /// Why a text is not a `HostPort`.
    public enum Refusal: Error, Sendable, Equatable {
        /// The text names a scheme other than the one expected (e.g. `https`).
        case scheme(String)
        /// No `HOST:PORT` shape: no colon, no host, or a host with `/` or whitespace.
        case form
        /// The port is not a number from 1 to 65535.
        case port
    }

    /// Parses `SCHEME://HOST:PORT`, `HOST:PORT` or either with a final `/`, where `SCHEME` is `scheme`.
    public init(url text: String, scheme: String) throws(Refusal) {
        var rest = Substring(text)
        if let separator = rest.firstRange(of: "://") {
            let given = rest[..<separator.lowerBound]
            guard given == scheme else { throw .scheme(String(given)) }
            rest = rest[separator.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let colon = rest.lastIndex(of: ":") else { throw .form }
        var host = rest[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, !host.contains("/"), !host.contains(where: \.isWhitespace) else { throw .form }
        guard let port = UInt16(rest[rest.index(after: colon)...]), port > 0 else { throw .port }
        self.host = String(host)
        self.port = port
    }
}
