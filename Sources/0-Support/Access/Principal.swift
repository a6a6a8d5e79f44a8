/// An authenticated key as Lyceum knows it: its name, role and, for a `learner` key, the
/// learners it may act for.
public struct Principal: Sendable, Hashable {
    /// The key's name (its certificate's file name), for logs and audit; never a secret.
    public let name: String
    /// What the key may do.
    public let role: Role
    /// The learners a `learner` key may act for; empty for every other role.
    public let learners: Set<String>

    /// A principal called `name` with `role`, acting for `learners` when the role is `learner`.
    public init(name: String, role: Role, learners: Set<String> = []) {
        self.name = name
        self.role = role
        self.learners = role == .learner ? learners : []
    }
}

/// Who sent a request or opened a connection, as far as the transport can tell, and what the
/// rules let it do.
public enum Caller: Sendable, Hashable {
    /// Security is off (plaintext on a trusted network, as on loopback by default): every rule
    /// allows, as before authentication existed.
    case unverified
    /// A peer that proved it holds an authorised key.
    case authenticated(Principal)

    /// Whether the caller has `permission`.
    public func may(_ permission: Permission) -> Bool {
        switch self {
        case .unverified: true
        case .authenticated(let principal): principal.role.permissions.contains(permission)
        }
    }

    /// Whether the caller may read or change `learner`'s data: anyone when security is off,
    /// `app` and `admin` keys for every learner, a `learner` key for the learners its
    /// certificate lists, nobody else.
    public func mayActFor(learner: String) -> Bool {
        switch self {
        case .unverified: true
        case .authenticated(let principal):
            principal.role.permissions.contains(.callTrustedOperations) || principal.learners.contains(learner)
        }
    }
}
