#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Writes structured log lines to standard error: a timestamp, a level, the component that
/// logs, a message and named fields.
///
/// Loggers are cheap values; every logger in the process shares one configuration
/// (``Logger/configure(level:format:)``), which can change while the process runs, e.g. on SIGHUP.
/// A line below the configured level costs one atomic load: its message and fields are
/// autoclosures that are never evaluated.
public struct Logger: Sendable {
    /// The part of Lyceum that logs, such as `broker`, `journal` or `worker.books`.
    public let component: String

    /// A logger for `component`.
    public init(component: String) { self.component = component }

    private static let minimumLevel = Atomic<Int>(LogLevel.info.rawValue)
    private static let lineFormat = Atomic<Int>(LogFormat.allCases.firstIndex(of: defaultFormat) ?? 0)

    /// Human text when standard error is a terminal, logfmt otherwise.
    public static var defaultFormat: LogFormat { isatty(STDERR_FILENO) == 1 ? .human : .logfmt }

    /// Sets the level and format for every logger in the process.
    public static func configure(level: LogLevel, format: LogFormat) {
        minimumLevel.store(level.rawValue, ordering: .relaxed)
        lineFormat.store(LogFormat.allCases.firstIndex(of: format) ?? 0, ordering: .relaxed)
    }

    /// The level below which lines are dropped.
    public static var level: LogLevel { LogLevel(rawValue: minimumLevel.load(ordering: .relaxed)) ?? .info }

    /// The format lines are written in.
    public static var format: LogFormat { LogFormat.allCases[lineFormat.load(ordering: .relaxed)] }

    /// Whether a line at `level` would be written; use it to skip work that only feeds a log line.
    public func isEnabled(_ level: LogLevel) -> Bool { level.rawValue >= Self.minimumLevel.load(ordering: .relaxed) }

    /// Writes one line if `level` is enabled.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        guard isEnabled(level) else { return }
        var line = LogLine(format: Self.format)
        line.append(level: level, component: component, message: message(), fields: fields())
        line.write(to: STDERR_FILENO)
    }

    /// Logs at ``LogLevel/trace``.
    public func trace(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.trace, message(), fields())
    }

    /// Logs at ``LogLevel/debug``.
    public func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.debug, message(), fields())
    }

    /// Logs at ``LogLevel/info``.
    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.info, message(), fields())
    }

    /// Logs at ``LogLevel/warning``.
    public func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.warning, message(), fields())
    }

    /// Logs at ``LogLevel/error``.
    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.error, message(), fields())
    }

    /// Logs at ``LogLevel/critical``.
    public func critical(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.critical, message(), fields())
    }
}
