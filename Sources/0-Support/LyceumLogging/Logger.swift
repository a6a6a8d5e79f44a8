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
///
/// Lines below ``LogLevel/critical`` are rate-limited per component and message
/// (``configure(linesPerSecond:)``, 10 a second by default, with a burst of one second's worth):
/// a line over the limit costs its message and a short lock, and is counted instead of written.
/// Once a second, for each message that had lines refused, one line at the same level says how
/// many (`suppressed`), with the message in `repeated`. Errors are limited too: an error repeated
/// in a loop (a replica refusing every append) must not flood the log, and its count survives in
/// the summary. Critical lines (a process about to stop) are never limited. Fields that carry a value a peer chose go through ``PeerText/excerpt(_:)-(Collection<UInt8>)``.
public struct Logger: Sendable {
    /// The part of Lyceum that logs, such as `broker`, `journal` or `worker.books`.
    public let component: String

    /// A logger for `component`.
    public init(component: String) { self.component = component }

    private static let minimumLevel = Atomic<Int>(LogLevel.info.rawValue)
    private static let lineFormat = Atomic<Int>(LogFormat.allCases.firstIndex(of: defaultFormat) ?? 0)
    private static let linesPerSecond = Atomic<Int>(defaultLinesPerSecond)
    static let rateLimiter = LogRateLimiter()

    /// Lines per second written for one component and message below ``LogLevel/error``, unless configured.
    public static let defaultLinesPerSecond = 10

    /// Human text when standard error is a terminal, logfmt otherwise.
    public static var defaultFormat: LogFormat { isatty(STDERR_FILENO) == 1 ? .human : .logfmt }

    /// Sets the level and format for every logger in the process.
    public static func configure(level: LogLevel, format: LogFormat) {
        minimumLevel.store(level.rawValue, ordering: .relaxed)
        lineFormat.store(LogFormat.allCases.firstIndex(of: format) ?? 0, ordering: .relaxed)
    }

    /// Sets how many lines a second each component and message below ``LogLevel/error`` may
    /// write, for every logger in the process; 0 writes every line.
    public static func configure(linesPerSecond: Int) {
        self.linesPerSecond.store(max(0, linesPerSecond), ordering: .relaxed)
    }

    /// Lines per second per component and message below ``LogLevel/error``; 0 means no limit.
    public static var rateLimit: Int { linesPerSecond.load(ordering: .relaxed) }

    /// The level below which lines are dropped.
    public static var level: LogLevel { LogLevel(rawValue: minimumLevel.load(ordering: .relaxed)) ?? .info }

    /// The format lines are written in.
    public static var format: LogFormat { LogFormat.allCases[lineFormat.load(ordering: .relaxed)] }

    /// Whether a line at `level` would be written; use it to skip work that only feeds a log line.
    public func isEnabled(_ level: LogLevel) -> Bool { level.rawValue >= Self.minimumLevel.load(ordering: .relaxed) }

    /// Writes one line if `level` is enabled.
    /// A line below ``LogLevel/critical`` is written only if its component and message are within the rate limit.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        guard isEnabled(level) else { return }
        let text = message()
        if Self.isRateLimited(level), !Self.rateLimiter.admit(
            component: component, message: text, level: level, now: Self.monotonicNanoseconds(), linesPerSecond: Self.rateLimit) {
            SuppressionSummaries.start()
            return
        }
        Self.write(level, component: component, message: text, fields: fields())
    }

    /// Whether lines of `level` go through the rate limit: all but critical ones.
    static func isRateLimited(_ level: LogLevel) -> Bool { level < .critical }

    /// Writes, for each component and message that had lines refused by the rate limit since the
    /// last summary, one line saying how many. Runs once a second once a line has been refused;
    /// call it before exiting so that the last second's counts are not lost.
    public static func writeSuppressedSummaries() {
        for suppressed in rateLimiter.takeSuppressed() {
            write(suppressed.level, component: suppressed.key.component, message: "log lines suppressed by the rate limit",
                  fields: ["repeated": suppressed.key.message, "suppressed": String(suppressed.count)])
        }
    }

    private static func write(_ level: LogLevel, component: String, message: String, fields: KeyValuePairs<String, String>) {
        var line = LogLine(format: format)
        line.append(level: level, component: component, message: message, fields: fields)
        line.write(to: STDERR_FILENO)
    }

    /// A coarse monotonic clock (a few milliseconds' resolution, no system call): enough for
    /// buckets that refill over a second, and cheap enough for every refused line.
    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
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
