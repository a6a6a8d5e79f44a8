import Access
import Synchronization

/// Authorised keys in a dictionary, by the Z85 text of their public keys (the User-Id Lyceum's
/// ZAP handler gives a connection): a key directory for tests, whose `revoke` removes a key as a
/// reload of the directory would.
public final class KeyTable: KeyDirectory {
    private let principals = Mutex<[String: Principal]>([:])

    /// An empty table.
    public init() {}

    /// Authorises the key whose public key's Z85 text is `key` as `principal`.
    public func add(_ key: String, as principal: Principal) {
        principals.withLock { $0[key] = principal }
    }

    /// Removes the key whose public key's Z85 text is `key`.
    public func revoke(_ key: String) {
        principals.withLock { $0[key] = nil }
    }

    /// The principal of `z85PublicKey`, or `nil` when it is not in the table.
    public func principal(forKey z85PublicKey: String) -> Principal? {
        principals.withLock { $0[z85PublicKey] }
    }
}
