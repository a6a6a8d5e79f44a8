import Access
import Security

/// The authorised keys of a process, plus the process's own public key as an `app` caller when
/// they do not list it: so that clients inside the process that must go through its own broker
/// over the network (the `broker`'s catalog titles for its dashboard) authenticate with the
/// process's own keys. Only the holder of the process's secret certificate can present that
/// key, and it could run the broker anyway. A key the directory lists keeps its role there: the
/// workers of one host share one `worker` key, and replicas of one another admit it as a worker's.
struct OwnKeyDirectory: KeyDirectory {
    /// The name the process's own key is known by in logs and to workers.
    static let ownName = "self"

    /// The keys from `authorized-keys`, reloaded on SIGHUP.
    let keyRing: KeyRing
    /// The Z85 text of the process's own public key.
    let ownKey: String

    func principal(forKey z85PublicKey: String) -> Principal? {
        if let listed = keyRing.principal(forKey: z85PublicKey) { return listed }
        return z85PublicKey == ownKey ? Principal(name: Self.ownName, role: .app) : nil
    }
}
