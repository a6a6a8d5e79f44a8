import Access

/// Which permission a client needs to call a service, decided by the start of the service's
/// name: the application's policy, which the broker enforces without knowing what the names
/// mean. The broker's own `mmi.` services always need `manage`; a name matching none of
/// ``rules`` needs `callServices`.
public struct ServicePermissions: Sendable {
    /// Names starting with `prefix` need `permission`.
    public struct Rule: Sendable, Equatable {
        /// The start of the names the rule covers, e.g. `admin.`.
        public let prefix: String
        /// What a caller needs to call them.
        public let permission: Permission

        /// A rule: names starting with `prefix` need `permission`.
        public init(prefix: String, permission: Permission) {
            self.prefix = prefix
            self.permission = permission
        }
    }

    /// The application's rules; where several match a name, the longest prefix decides.
    public let rules: [Rule]
    private let prefixes: [(prefix: [UInt8], permission: Permission)]

    /// A policy of `rules` (none: every name outside `mmi.` needs `callServices`).
    public init(_ rules: [Rule] = []) {
        self.rules = rules
        prefixes = rules.map { (Array($0.prefix.utf8), $0.permission) }.sorted { $0.prefix.count > $1.prefix.count }
    }

    /// The permission a call to `name` needs: `manage` for `mmi.*`, else the permission of the
    /// longest rule whose prefix starts `name`, else `callServices`.
    public func permission(toCall name: [UInt8]) -> Permission {
        if name.starts(with: MDP.managementPrefix) { return .manage }
        return prefixes.first { name.starts(with: $0.prefix) }?.permission ?? .callServices
    }
}
