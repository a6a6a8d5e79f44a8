import Access
import ZeroMQ

/// Where a partition's leader is reached, as its leader key in etcd holds it:
/// `NODE ENDPOINT` over plaintext, `NODE ENDPOINT KEY` over CURVE (`KEY`: the Z85 public key its
/// link presents, which followers check against their own key directory before connecting).
public struct LeaderAddress: Sendable, Equatable, CustomStringConvertible {
    /// The leader's node name.
    public let node: String
    /// Its replication link (`tcp://ADDRESS:PORT`).
    public let endpoint: String
    /// The Z85 public key of its CURVE server, `nil` over plaintext.
    public let publicKey: String?

    /// The address of `node`'s link at `endpoint`, presenting `publicKey`.
    public init(node: String, endpoint: String, publicKey: String?) {
        self.node = node
        self.endpoint = endpoint
        self.publicKey = publicKey
    }

    /// Reads a leader key's value.
    /// - Throws: ``UntrustedLeader`` when it is not two or three fields, a node name, an
    ///   endpoint and a 40-character Z85 key.
    public init(parsing value: String) throws(UntrustedLeader) {
        let fields = value.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard (2...3).contains(fields.count), Identifier.isValid(fields[0]), fields[1].hasPrefix("tcp://") else {
            throw UntrustedLeader(value: value, reason: "not NODE tcp://ADDRESS:PORT [KEY]")
        }
        if fields.count == 3, fields[2].utf8.count != 40 || (try? Z85.decode(fields[2])) == nil {
            throw UntrustedLeader(value: value, reason: "its key is not a 40-character Z85 public key")
        }
        self.init(node: fields[0], endpoint: fields[1], publicKey: fields.count == 3 ? fields[2] : nil)
    }

    /// The leader key's value.
    public var description: String { [node, endpoint, publicKey].compactMap { $0 }.joined(separator: " ") }
}

/// Why a node does not follow the leader its leader key names: the value cannot be read, or
/// (over CURVE) it names no key, or a key this node's directory does not hold as a worker's.
/// etcd is trusted, but a follower never connects to a key it does not know: it would hand a
/// stranger its position and take records from it.
public struct UntrustedLeader: Error, Sendable, Equatable, CustomStringConvertible {
    /// The leader key's value.
    public let value: String
    /// What is wrong with it.
    public let reason: String

    /// `value` refused for `reason`.
    public init(value: String, reason: String) {
        self.value = value
        self.reason = reason
    }

    /// `leader 'VALUE': REASON`.
    public var description: String { "leader '\(value)': \(reason)" }
}

/// How a node's replication links are secured (protocol/replication.md, "Security").
public enum ReplicationSecurity: Sendable {
    /// Plaintext links (loopback, or `--insecure`).
    case plaintext
    /// CURVE: a leader's link is a CURVE server with this node's `keys` under `zapDomain`, whose
    /// ZAP handler admits only worker keys; following, this node connects with `keys`, and only
    /// to a leader whose Z85 public key `isWorkerKey` accepts.
    case curve(keys: CurveKeyPair, zapDomain: String, isWorkerKey: @Sendable (String) -> Bool)

    /// The public key a leader's address carries, `nil` over plaintext.
    var publicKey: String? {
        guard case .curve(let keys, _, _) = self else { return nil }
        return try? Z85.encode(keys.publicKey)
    }

    /// The security of a leader's link.
    var leading: SocketSecurity {
        guard case .curve(let keys, let domain, _) = self else { return .plaintext }
        return .curveServer(keys, zapDomain: domain)
    }

    /// The security of the link to `leader`.
    /// - Throws: ``UntrustedLeader`` over CURVE when `leader` names no key or one that is not a
    ///   worker's here.
    func following(_ leader: LeaderAddress) throws(UntrustedLeader) -> SocketSecurity {
        guard case .curve(let keys, _, let isWorkerKey) = self else { return .plaintext }
        guard let key = leader.publicKey, let serverKey = try? Z85.decode(key) else {
            throw UntrustedLeader(value: leader.description, reason: "names no CURVE key, and this node replicates over CURVE")
        }
        guard isWorkerKey(key) else {
            throw UntrustedLeader(value: leader.description, reason: "its key is not a worker key in this node's authorized keys")
        }
        return .curveClient(keys, serverKey: serverKey)
    }
}
