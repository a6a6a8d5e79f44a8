/// When an appended record counts as durable, and so when its writer may be acknowledged.
///
/// The journal applies it; it lives here, with its text form, so that the `durability` setting
/// is parsed into it by `Configuration` without that module linking the journal.
public enum DurabilityPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Acknowledged only after the record's bytes are `fdatasync`ed. Concurrent writers share one
    /// sync (group commit). A crash of the process or of the machine loses nothing acknowledged.
    case always
    /// Acknowledged once written to the file (the page cache); a background thread syncs every
    /// `milliseconds`. A crash of the process loses nothing acknowledged; a crash of the machine
    /// or a power loss loses the writes acknowledged since the last completed sync, that is, at
    /// most about `milliseconds` plus the duration of one sync.
    case interval(milliseconds: Int)
    /// Acknowledged once written to the file; synced only by compaction and `close()`. For tests
    /// and benchmarks: a machine crash can lose any amount of acknowledged writes.
    case none

    /// Parses `always`, `none`, `interval` (every second) or `interval:MILLISECONDS`.
    public init?(_ text: String) {
        switch text {
        case "always": self = .always
        case "none": self = .none
        case "interval": self = .interval(milliseconds: 1000)
        default:
            guard text.hasPrefix("interval:"), let milliseconds = Int(text.dropFirst("interval:".count)),
                  milliseconds > 0 else { return nil }
            self = .interval(milliseconds: milliseconds)
        }
    }

    /// The policy as `init(_:)` parses it.
    public var description: String {
        switch self {
        case .always: "always"
        case .none: "none"
        case let .interval(milliseconds): "interval:\(milliseconds)"
        }
    }
}
