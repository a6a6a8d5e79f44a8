/// How much a log line matters; lines below the configured level are never formatted.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    /// Every request and frame; for chasing a bug.
    case trace
    /// Internal decisions worth seeing while developing.
    case debug
    /// Normal operation: starts, stops, connections.
    case info
    /// Something unusual that Lyceum handled (a peer expired, a torn journal tail cut off).
    case warning
    /// Something failed and a user or operator may notice.
    case error
    /// The process cannot go on.
    case critical

    /// The level's lowercase name, as accepted in configuration.
    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    /// Parses a level name as written in configuration (`info`, `warning`, …).
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = level
    }

    /// Orders levels from least to most severe.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    /// Aligned, readable text for a person at a terminal.
    case human
    /// `key=value` pairs (logfmt), one line per entry, for log shippers.
    case logfmt
    /// One JSON object per line.
    case json
}
