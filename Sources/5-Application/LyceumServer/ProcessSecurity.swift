import Access
import Configuration
import LyceumLifecycle
import LyceumLogging
import PartitionOperations
import Security
import Synchronization
import ZeroMQ

/// The CURVE side of one process, from its settings: plaintext (no `curve-secret-key`), or its
/// keys with the broker's public key (a process that connects: `worker`, `call`, `status`)
/// and/or with the authorised keys (a process that binds: `serve`, `broker`, and a `worker`
/// whose snapshot ROUTER admits dashboards).
public struct ProcessSecurity: Sendable {
    /// The process's keys; `nil` for plaintext.
    public let credentials: CurveCredentials?
    /// The authorised keys of a process that binds with CURVE.
    public let keyRing: KeyRing?

    /// No CURVE anywhere: every socket plaintext, every caller `.unverified`.
    public static let plaintext = ProcessSecurity(credentials: nil, keyRing: nil)

    /// The security of `serve` or `broker`: with `curve-secret-key`, `authorized-keys` is
    /// required and the reverse; the secret certificate must be private (0600) and the key
    /// directory listable.
    /// - Throws: ``CredentialsError`` naming the setting and the file.
    public static func server(_ settings: Settings) throws(CredentialsError) -> ProcessSecurity {
        switch (settings.curveSecretKey, settings.authorizedKeys) {
        case (nil, nil):
            return .plaintext
        case (let secret?, nil):
            throw CredentialsError(setting: .authorizedKeys, path: nil,
                                   reason: "required with curve-secret-key \(secret): the directory of the keys allowed to connect")
        case (nil, let directory?):
            throw CredentialsError(setting: .secretKey, path: nil,
                                   reason: "required with authorized-keys \(directory): this process's secret certificate")
        case (let secret?, let directory?):
            let credentials = try CurveCredentials.load(secretCertificate: secret, serverCertificate: nil)
            return ProcessSecurity(credentials: credentials, keyRing: try keyRing(directory))
        }
    }

    /// The security of `worker`: that of a client (``client(_:)``) and, with `authorized-keys`,
    /// the keys its snapshot ROUTER admits (`dashboard` and `admin` keys, the broker's own for
    /// its dashboard). `authorized-keys` needs CURVE.
    /// - Throws: ``CredentialsError`` naming the setting and the file.
    public static func worker(_ settings: Settings) throws(CredentialsError) -> ProcessSecurity {
        let client = try client(settings)
        guard let directory = settings.authorizedKeys else { return client }
        guard let credentials = client.credentials else {
            throw CredentialsError(setting: .secretKey, path: nil,
                                   reason: "required with authorized-keys \(directory): this process's secret certificate")
        }
        return ProcessSecurity(credentials: credentials, keyRing: try keyRing(directory))
    }

    /// The authorised keys in `directory`.
    private static func keyRing(_ directory: String) throws(CredentialsError) -> KeyRing {
        do {
            return try KeyRing(directory: directory, logger: Logger(component: "keys"))
        } catch {
            throw CredentialsError(setting: .authorizedKeys, path: directory, reason: error.description)
        }
    }

    /// The security of a process that connects to a broker (`worker`, `call`, `status`):
    /// `curve-secret-key` and `curve-server-key` together, or neither.
    /// - Throws: ``CredentialsError`` naming the setting and the file.
    public static func client(_ settings: Settings) throws(CredentialsError) -> ProcessSecurity {
        let credentials = try CurveCredentials.client(secretCertificate: settings.curveSecretKey, serverCertificate: settings.curveServerKey)
        return ProcessSecurity(credentials: credentials, keyRing: nil)
    }

    /// Whether CURVE is on.
    public var isCurve: Bool { credentials != nil }

    /// The security of a socket the process binds, checked under `domain`.
    public func bound(_ domain: ZAPDomain) -> SocketSecurity {
        credentials?.server(domain) ?? .plaintext
    }

    /// The security of a worker's replication links: with CURVE, its own keys, and the keys of
    /// its authorised keys whose role may replicate (`worker`) as the only peers, leading or
    /// following; plaintext without CURVE. A worker with `replicas` above 1 and CURVE has
    /// authorised keys (`lyceum worker` refuses it otherwise); without them no key is trusted.
    var replication: ReplicationSecurity {
        guard let credentials else { return .plaintext }
        let keyRing = keyRing
        return .curve(keys: credentials.keys, zapDomain: ZAPDomain.replication.rawValue) { key in
            keyRing?.principal(forKey: key)?.role.permissions.contains(.replicatePartitions) == true
        }
    }

    /// The security of a socket the process connects to the broker (or its forwarder).
    public var connecting: SocketSecurity {
        credentials?.client ?? .plaintext
    }

    /// The security of a socket the process connects to its own CURVE servers: a client of its
    /// own public key, which ``directory`` counts as an `app` caller.
    var connectingToItself: SocketSecurity {
        credentials.map { .curveClient($0.keys, serverKey: $0.keys.publicKey) } ?? .plaintext
    }

    /// Who may connect and call: the authorised keys, and the process's own key as `app`
    /// (``OwnKeyDirectory``); `nil` without CURVE servers.
    var directory: (any KeyDirectory)? {
        guard let credentials, let keyRing, let ownKey = try? Z85.encode(credentials.keys.publicKey) else { return nil }
        return OwnKeyDirectory(keyRing: keyRing, ownKey: ownKey)
    }

    /// The process's ZAP handler, deciding with the authorised keys, when CURVE servers need
    /// one: it must come first in the process's ``ComponentGroup``.
    func zapHandler(context: Context) throws(ZMQError) -> [(name: String, component: any Component)] {
        guard let directory else { return [] }
        let authenticator = Authenticator(keys: directory)
        return [("zap", try ZAPHandler(context: context, decide: authenticator.decide))]
    }
}

/// What a key reload must make the event sockets do: those that bind for subscribers (and the
/// forwarder's input) register here when they start, and a reload that revoked a permission
/// tells each of them, so every peer authenticates again (ZAP runs only at handshakes).
public final class Revocations: Sendable {
    private let reactions = Mutex<[@Sendable (Set<Permission>) -> Void]>([])

    /// A list with no socket owner registered yet.
    public init() {}

    /// Calls `reaction` with the permissions of every later reload's removed or changed keys.
    func onRevocation(_ reaction: @escaping @Sendable (Set<Permission>) -> Void) {
        reactions.withLock { $0.append(reaction) }
    }

    /// Tells every registered socket owner that `permissions` were revoked.
    func revoked(_ permissions: Set<Permission>) {
        guard !permissions.isEmpty else { return }
        for reaction in reactions.withLock({ $0 }) { reaction(permissions) }
    }
}
