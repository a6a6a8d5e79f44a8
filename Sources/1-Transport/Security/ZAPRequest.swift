/// One ZAP authentication request (RFC 27): a peer's handshake that libzmq asks the process's
/// ZAP handler to allow or deny.
public struct ZAPRequest: Sendable, Equatable {
    /// The `ZMQ_ZAP_DOMAIN` of the socket the peer connects to: which of the process's
    /// sockets it is.
    public let domain: String
    /// The peer's IP address as text.
    public let address: String
    /// `NULL`, `PLAIN` or `CURVE`.
    public let mechanism: String
    /// The mechanism's credentials: for CURVE, the client's 32-byte long-term public key.
    public let credentials: [[UInt8]]

    /// A request with these parts, as the handler received them.
    public init(domain: String, address: String, mechanism: String, credentials: [[UInt8]]) {
        self.domain = domain
        self.address = address
        self.mechanism = mechanism
        self.credentials = credentials
    }

    /// The CURVE client's public key, or `nil` for another mechanism or a malformed key.
    public var curvePublicKey: [UInt8]? {
        guard mechanism == "CURVE", credentials.count == 1, credentials[0].count == 32 else { return nil }
        return credentials[0]
    }
}

/// What the ZAP handler answers to a ``ZAPRequest``.
public enum ZAPDecision: Sendable, Equatable {
    /// Let the peer in; libzmq attaches `userID` to each of its messages as `"User-Id"`.
    case allow(userID: String)
    /// Refuse the handshake (status 400), for the reason given (logged, not sent to the peer
    /// beyond libzmq's generic refusal).
    case deny(reason: String)
}
