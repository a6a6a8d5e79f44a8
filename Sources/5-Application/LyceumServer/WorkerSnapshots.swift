import Configuration

/// The rules for a worker's chosen snapshot endpoint (`snapshot-endpoint`), which its event
/// heartbeats advertise to every subscriber so that they can repair gaps from other hosts.
enum WorkerSnapshots {
    /// Refuses an endpoint subscribers could not use or that would expose learners' progress:
    /// a wildcard host (`*`, `0.0.0.0`, `::`), which cannot be advertised as an address to
    /// connect to, and, as protected mode does for `serve` and `broker`, a non-loopback endpoint
    /// without CURVE unless `insecure` is set.
    /// - Throws: ``SettingsError`` naming `snapshot-endpoint` and where it came from.
    static func check(_ endpoint: String, settings: Settings, curve: Bool) throws(SettingsError) {
        let origin = settings.origins[.snapshotEndpoint] ?? .defaultValue
        guard endpoint.hasPrefix("tcp://") else {
            throw SettingsError(key: .snapshotEndpoint, origin: origin, message: "a worker's snapshot endpoint must be tcp://ADDRESS:PORT (PORT may be *), got '\(endpoint)'")
        }
        if wildcardHosts.contains(where: { endpoint.hasPrefix("tcp://\($0):") }) {
            throw SettingsError(key: .snapshotEndpoint, origin: origin, message: """
                \(endpoint) cannot be advertised: heartbeats tell subscribers where to ask for snapshots, \
                so give the address other hosts reach this worker at, e.g. tcp://10.0.0.21:* (the port may be *)
                """)
        }
        try ProtectedMode.check([(.snapshotEndpoint, endpoint)], settings: settings, curve: curve)
    }

    /// Hosts that bind every interface and name none.
    private static let wildcardHosts = ["*", "0.0.0.0", "[::]", "::"]
}
