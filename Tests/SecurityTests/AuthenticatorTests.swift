import Access
import Security
import Testing
import ZeroMQ

@Suite("Authenticator")
struct AuthenticatorTests {
    /// A fixed directory of keys, one per role.
    struct Directory: KeyDirectory {
        let principals: [String: Principal]
        func principal(forKey z85PublicKey: String) -> Principal? { principals[z85PublicKey] }
    }

    let keys: [Role: CurveKeyPair]
    let authenticator: Authenticator

    init() throws {
        var keys: [Role: CurveKeyPair] = [:]
        var principals: [String: Principal] = [:]
        for role in Role.allCases {
            let pair = try CurveKeyPair.generate()
            keys[role] = pair
            principals[try Z85.encode(pair.publicKey)] = Principal(name: role.rawValue, role: role, learners: ["ada"])
        }
        self.keys = keys
        authenticator = Authenticator(keys: Directory(principals: principals))
    }

    func request(_ domain: String, _ key: [UInt8], mechanism: String = "CURVE") -> ZAPRequest {
        ZAPRequest(domain: domain, address: "127.0.0.1", mechanism: mechanism, credentials: mechanism == "CURVE" ? [key] : [])
    }

    func allowed(_ role: Role, _ domain: ZAPDomain) -> Bool {
        if case .allow = authenticator.decide(request(domain.rawValue, keys[role]!.publicKey)) { return true }
        return false
    }

    @Test("each domain admits exactly the roles with its permission")
    func domainsFollowPermissions() {
        for role in Role.allCases {
            #expect(allowed(role, .broker), "\(role) refused by the broker")
            #expect(allowed(role, .events) == [.dashboard, .admin].contains(role), "\(role) on events")
            #expect(allowed(role, .snapshots) == [.dashboard, .admin].contains(role), "\(role) on snapshots")
            #expect(allowed(role, .forwarder) == (role == .worker), "\(role) on the forwarder")
            #expect(allowed(role, .replication) == (role == .worker), "\(role) on the replication link")
        }
    }

    @Test("the User-Id is the Z85 text of the client's public key")
    func userIDIsTheZ85Key() throws {
        let key = keys[.app]!.publicKey
        let decision = authenticator.decide(request(ZAPDomain.broker.rawValue, key))
        #expect(decision == .allow(userID: try Z85.encode(key)))
        guard case .allow(let userID) = decision else { return }
        #expect(userID.count == 40)
    }

    @Test("unknown keys, other mechanisms, malformed keys and unknown domains are denied")
    func refusals() throws {
        let stranger = try CurveKeyPair.generate().publicKey
        let admin = keys[.admin]!.publicKey
        let cases = [
            request(ZAPDomain.broker.rawValue, stranger),
            request(ZAPDomain.broker.rawValue, admin, mechanism: "NULL"),
            request(ZAPDomain.broker.rawValue, admin, mechanism: "PLAIN"),
            request(ZAPDomain.broker.rawValue, Array(admin.prefix(31))),
            request("lyceum.other", admin),
            request("", admin),
        ]
        for request in cases {
            guard case .deny = authenticator.decide(request) else {
                Issue.record("allowed \(request)")
                continue
            }
        }
    }
}
