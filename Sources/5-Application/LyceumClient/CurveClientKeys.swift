import Security
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

    /// The keys of the certificate files `lyceum keys generate` writes (zcert format): the
    /// client's secret certificate (`NAME_secret`) and the broker's public certificate, read
    /// as `lyceum call --curve-secret-key … --curve-server-key …` reads them.
    /// - Throws: ``LyceumError/Code/invalidConfiguration`` naming the file and what is wrong
    ///   with it: unreadable, not a certificate, no secret key, or readable by group or others.
    public init(secretCertificate: String, serverCertificate: String) throws(LyceumError) {
        do {
            let credentials = try CurveCredentials.load(secretCertificate: secretCertificate, serverCertificate: serverCertificate)
            // `load` gives a server key whenever it is asked for one.
            self.init(keyPair: credentials.keys, serverPublicKey: credentials.serverKey ?? [])
        } catch {
            throw LyceumError(code: .invalidConfiguration, message: error.description, service: "", op: "")
        }
    }

    /// The sockets' security: a CURVE client of that broker.
    var security: SocketSecurity { .curveClient(keyPair, serverKey: serverPublicKey) }
}
