import Access
import ZeroMQ

/// The decision behind Lyceum's ``ZAPHandler``: who may complete a handshake with which socket.
///
/// Only CURVE is accepted (a NULL or PLAIN peer reaching a CURVE server is refused); the key
/// must be in the ``KeyDirectory`` at the time of the handshake; the key's role must have the
/// permission of the socket's ``ZAPDomain``; an unknown domain is refused. An allowed peer's
/// User-Id is the Z85 text of its public key, which the broker looks up again per message.
public struct Authenticator: Sendable {
    private let keys: any KeyDirectory

    /// An authenticator that asks `keys` for each handshake's key.
    public init(keys: any KeyDirectory) {
        self.keys = keys
    }

    /// Allows or denies one handshake; cheap (one directory lookup), as the ZAP handler needs.
    public func decide(_ request: ZAPRequest) -> ZAPDecision {
        guard let domain = ZAPDomain(rawValue: request.domain) else {
            return .deny(reason: "unknown ZAP domain")
        }
        guard request.mechanism == "CURVE" else {
            return .deny(reason: "mechanism \(request.mechanism) is not CURVE")
        }
        guard let publicKey = request.curvePublicKey, let userID = try? Z85.encode(publicKey) else {
            return .deny(reason: "malformed CURVE public key")
        }
        guard let principal = keys.principal(forKey: userID) else {
            return .deny(reason: "key \(userID) is not authorised")
        }
        if let permission = domain.requiredPermission, !principal.role.permissions.contains(permission) {
            return .deny(reason: "key \(principal.name) (role \(principal.role.rawValue)) lacks \(permission.rawValue) for \(domain.rawValue)")
        }
        return .allow(userID: userID)
    }
}
