/// The authorised keys, looked up by the `User-Id` that Lyceum's ZAP handler gives each CURVE
/// connection: the Z85 text (40 characters) of the peer's public key.
///
/// Implementations are safe to call from any thread and answer from their current contents, so a
/// key removed by a reload is refused from the next request on, also on connections that
/// authenticated with it before.
public protocol KeyDirectory: Sendable {
    /// The principal of the key whose public key is `z85PublicKey`, or `nil` when it is not (or
    /// no longer) authorised.
    func principal(forKey z85PublicKey: String) -> Principal?
}
