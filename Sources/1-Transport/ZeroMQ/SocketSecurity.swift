/// How a socket authenticates and encrypts its connections: applied once, before the socket
/// binds or connects.
public enum SocketSecurity: Sendable, Equatable {
    /// ZeroMQ's NULL mechanism: no authentication, no encryption.
    case plaintext
    /// A CURVE server (RFC 26) with the process's long-term keys; every client's handshake goes
    /// to the process's ZAP handler under `zapDomain`, which decides who may connect.
    case curveServer(CurveKeyPair, zapDomain: String)
    /// A CURVE client with its own long-term keys, that connects only to a server holding the
    /// secret key of `serverKey`.
    case curveClient(CurveKeyPair, serverKey: [UInt8])

    /// Whether the socket uses CURVE.
    public var isCurve: Bool { self != .plaintext }

    /// The same keys as a client of the server whose public key is `serverKey`: what a process
    /// with server keys uses for the sockets it connects.
    public func client(ofServer serverKey: [UInt8]) -> SocketSecurity {
        switch self {
        case .plaintext: .plaintext
        case .curveServer(let keys, _), .curveClient(let keys, _): .curveClient(keys, serverKey: serverKey)
        }
    }
}

extension Socket {
    /// Applies `security` (`ZMQ_CURVE_SERVER`, `ZMQ_CURVE_PUBLICKEY`, `ZMQ_CURVE_SECRETKEY`,
    /// `ZMQ_CURVE_SERVERKEY`, `ZMQ_ZAP_DOMAIN`); call it before `bind` or `connect`. With CURVE,
    /// ``wireBytesSent`` and ``wireBytesReceived`` count each frame as its MESSAGE command.
    public func secure(_ security: SocketSecurity) throws(ZMQError) {
        if security.isCurve { mechanismOverhead = ZMTPFrame.curveOverhead }
        switch security {
        case .plaintext:
            return
        case .curveServer(let keys, let zapDomain):
            try set(.curveServer, to: true)
            try set(.curveSecretKey, to: keys.secretKey)
            try set(.curvePublicKey, to: keys.publicKey)
            try set(.zapDomain, to: zapDomain)
        case .curveClient(let keys, let serverKey):
            try set(.curveServerKey, to: serverKey)
            try set(.curvePublicKey, to: keys.publicKey)
            try set(.curveSecretKey, to: keys.secretKey)
        }
    }
}
