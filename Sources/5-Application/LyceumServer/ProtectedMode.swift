import Configuration

/// Redis's protected mode for Lyceum: `serve` and `broker` refuse to bind an endpoint that other
/// hosts can reach without CURVE, unless `insecure` says so explicitly.
///
/// Loopback is what only this host reaches: a `tcp://` host of `127.x.x.x`, `::1` (bracketed
/// or not), `localhost` or the interface `lo`; `ipc://` and `inproc://` endpoints. Everything
/// else counts as reachable: `*`, `0.0.0.0`, `::`, any other address, and any other host or
/// interface name, which is never resolved (a name's addresses can change after the check, and
/// a start must not wait for DNS).
enum ProtectedMode {
    /// Refuses the first endpoint of `endpoints` (each with the setting that names it) that is
    /// not loopback, when `security` is plaintext and `settings.insecure` is off.
    /// - Throws: ``SettingsError`` naming the setting and its origin, the endpoint, and the two ways out.
    static func check(_ endpoints: [(key: SettingKey, endpoint: String)], settings: Settings, curve: Bool) throws(SettingsError) {
        guard !curve, !settings.insecure else { return }
        for (key, endpoint) in endpoints where !isLoopback(endpoint) {
            throw SettingsError(key: key, origin: settings.origins[key] ?? .defaultValue, message: """
                refusing to bind \(endpoint) without CURVE: other hosts could connect with no authentication. \
                Either configure curve-secret-key and authorized-keys (see docs/security.md), \
                or give --insecure to accept plaintext on this endpoint
                """)
        }
    }

    /// Whether only this host can connect to `endpoint`.
    static func isLoopback(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        var host = Substring(endpoint.dropFirst("tcp://".count))
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        if host == "::1" || host == "localhost" || host == "lo" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
