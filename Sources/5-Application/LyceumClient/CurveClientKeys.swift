import ZeroMQ

/// What a client of a CURVE broker needs: its own key pair (which the broker's key ring may
/// authorize, with a role) and the broker's public key, which it checks the broker against.
public struct CurveClientKeys: Sendable, Equatable {
    /// The client's long-term key pair.
    public var keyPair: CurveKeyPair
    /// The broker's public key, 32 bytes.
    public var serverPublicKey: [UInt8]

    /// Keys for a client of the broker whose public key is `serverPublicKey`.
    public init(keyPair: CurveKeyPair, serverPublicKey: [UInt8]) {
        self.keyPair = keyPair
        self.serverPublicKey = serverPublicKey
    }

    /// The sockets' security: a CURVE client of that broker.
    var security: SocketSecurity { .curveClient(keyPair, serverKey: serverPublicKey) }
}
