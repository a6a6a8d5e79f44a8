import Access
import Security

/// The authorised keys of a process, plus the process's own public key as an `app` caller: so
/// that clients inside the process that must go through its own broker over the network (the
/// `broker`'s catalog titles for its dashboard) authenticate with the process's own keys. Only
/// the holder of the process's secret certificate can present that key, and it could run the
/// broker anyway.
struct OwnKeyDirectory: KeyDirectory {
    /// The name the process's own key is known by in logs and to workers.
    static let ownName = "self"

    /// The keys from `authorized-keys`, reloaded on SIGHUP.
    let keyRing: KeyRing
    /// The Z85 text of the process's own public key.
    let ownKey: String

    func principal(forKey z85PublicKey: String) -> Principal? {
        if z85PublicKey == ownKey { return Principal(name: Self.ownName, role: .app) }
        return keyRing.principal(forKey: z85PublicKey)
    }
}
