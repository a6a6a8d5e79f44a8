import Telemetry

/// The replication channel's format versions (protocol/replication.md, *Format versions*).
/// Version 1 is the channel of release-2026-12-07: its messages carry no version member, and
/// that release refuses any member it does not know. From version 2 on, a message says its
/// version first (`"v":2`). A node speaks to a peer the highest version both support, and
/// version 1 whenever it does not know what the peer supports: every build reads version 1.
/// A message of a version this build does not read is refused before anything else of it is
/// read (never misread), logged by its receiver, and counted in
/// `lyceum_replication_unsupported_versions_total`.
public enum ReplicationFormat {
    /// The oldest version this build reads and speaks: that of a peer that says none.
    public static let oldest = 1
    /// The newest version this build reads and speaks.
    public static let newest = 2

    /// The version to speak to a peer that reads up to `peerNewest` (`nil`: not known, so the
    /// oldest, which every build reads).
    public static func spoken(toPeerReadingUpTo peerNewest: Int?) -> Int {
        guard let peerNewest else { return oldest }
        return max(oldest, min(newest, peerNewest))
    }

    /// The messages refused for their version, by that version.
    static func refused(version: Int) -> ReplicationError {
        Counter(label: "lyceum_replication_unsupported_versions_total", dimensions: [("version", String(version))]).increment()
        return ReplicationError(.unsupportedVersion, "a peer speaks replication format v\(version); this build reads v\(oldest) to v\(newest)")
    }
}
