import ZeroMQ

/// A process's CURVE keys as its settings name them: its own secret certificate and, for a
/// process that connects to a broker, the broker's public certificate. From them come the
/// ``SocketSecurity`` of each socket it binds (a server under a ``ZAPDomain``) or connects (a
/// client of the broker's key).
public struct CurveCredentials: Sendable {
    /// This process's long-term keys.
    public let keys: CurveKeyPair
    /// The public key of the server this process connects to, when it connects to one.
    public let serverKey: [UInt8]?

    /// The keys of the secret certificate at `secretCertificate` and, when given, the public
    /// key of the certificate at `serverCertificate` (a public or a secret certificate).
    /// - Throws: ``CredentialsError`` naming the setting and the file: unreadable, not a
    ///   certificate, a secret certificate its group or others may access, or no secret key.
    public static func load(secretCertificate: String, serverCertificate: String?) throws(CredentialsError) -> CurveCredentials {
        let own: CurveCertificate
        do {
            own = try CurveCertificate.load(from: secretCertificate)
        } catch {
            throw CredentialsError(setting: .secretKey, path: secretCertificate, reason: Self.reason(error))
        }
        guard let keys = own.keyPair else {
            throw CredentialsError(setting: .secretKey, path: secretCertificate,
                                   reason: "a public certificate; give the secret one (\(CurveCertificate.secretPath(for: secretCertificate)))")
        }
        guard let serverCertificate else { return CurveCredentials(keys: keys, serverKey: nil) }
        do {
            return CurveCredentials(keys: keys, serverKey: try CurveCertificate.load(from: serverCertificate).publicKey)
        } catch {
            throw CredentialsError(setting: .serverKey, path: serverCertificate, reason: Self.reason(error))
        }
    }

    /// The credentials of a process that connects to a broker, from its two settings: `nil`
    /// (plaintext) when neither is set.
    /// - Throws: ``CredentialsError`` when only one is set (each needs the other), or as
    ///   ``load(secretCertificate:serverCertificate:)``.
    public static func client(secretCertificate: String?, serverCertificate: String?) throws(CredentialsError) -> CurveCredentials? {
        switch (secretCertificate, serverCertificate) {
        case (nil, nil):
            return nil
        case (let secret?, nil):
            throw CredentialsError(setting: .serverKey, path: nil,
                                   reason: "required with curve-secret-key \(secret): the broker's public certificate")
        case (nil, let server?):
            throw CredentialsError(setting: .secretKey, path: nil,
                                   reason: "required with curve-server-key \(server): this process's secret certificate")
        case (let secret?, let server?):
            return try load(secretCertificate: secret, serverCertificate: server)
        }
    }

    /// A certificate error's reason, with its line when one is to blame (the path is the setting's).
    private static func reason(_ error: CertificateError) -> String {
        (error.line.map { "line \($0): " } ?? "") + error.reason
    }

    /// A CURVE server with these keys, whose handshakes the process's ZAP handler checks under `domain`.
    public func server(_ domain: ZAPDomain) -> SocketSecurity {
        .curveServer(keys, zapDomain: domain.rawValue)
    }

    /// A CURVE client with these keys of the server whose key ``serverKey`` is; plaintext
    /// when there is none (a process that only binds).
    public var client: SocketSecurity {
        serverKey.map { .curveClient(keys, serverKey: $0) } ?? .plaintext
    }
}

/// A CURVE setting that cannot be used: which one, its file when one is to blame, and why.
/// Its description names the setting and the file, as `lyceum` prints it before exiting 2.
public struct CredentialsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The security settings.
    public enum Setting: String, Sendable {
        /// `curve-secret-key`.
        case secretKey = "curve-secret-key"
        /// `curve-server-key`.
        case serverKey = "curve-server-key"
        /// `authorized-keys`.
        case authorizedKeys = "authorized-keys"
    }

    /// The setting at fault.
    public let setting: Setting
    /// Its file or directory, when one is to blame.
    public let path: String?
    /// What is wrong.
    public let reason: String

    /// An error about `setting` (and its `path`).
    public init(setting: Setting, path: String?, reason: String) {
        self.setting = setting
        self.path = path
        self.reason = reason
    }

    /// `curve-secret-key keys/app_secret: group or others may read it …`.
    public var description: String {
        setting.rawValue + (path.map { " \($0)" } ?? "") + ": " + reason
    }
}
