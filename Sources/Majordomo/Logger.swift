#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Structured log lines to stderr, one per event, in logfmt: `ts=… level=… component=… msg="…" key=value`.
public struct Logger: Sendable {
    /// How important an event is; events below a logger's minimum are not written.
    public enum Level: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
        /// Every frame-level decision; for debugging a peer.
        case debug
        /// Registrations, reconnections, starts and stops.
        case info
        /// Dropped or refused traffic, silent peers.
        case warning
        /// Failures that stop a service.
        case error

        /// Orders by importance.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The level's name as written in log lines.
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// The part of the process writing, such as `broker` or `worker`.
    public var component: String
    /// The least important level written.
    public var minimumLevel: Level

    /// Creates a logger for a component.
    public init(component: String, minimumLevel: Level = .info) {
        self.component = component
        self.minimumLevel = minimumLevel
    }

    /// Writes one event when `level` is at least ``minimumLevel``; values are quoted as needed.
    public func log(_ level: Level, _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= minimumLevel else { return }
        var line = "ts=\(Date().ISO8601Format(.iso8601.time(includingFractionalSeconds: true).year().month().day())) level=\(level) component=\(Self.quoted(component)) msg=\(Self.quoted(message()))"
        for (key, value) in fields { line += " \(key)=\(Self.quoted(value))" }
        line += "\n"
        // One write(2) per line keeps lines from concurrent threads whole.
        line.utf8CString.withUnsafeBufferPointer { buffer in
            _ = write(STDERR_FILENO, buffer.baseAddress, buffer.count - 1)
        }
    }

    private static func quoted(_ value: String) -> String {
        if !value.isEmpty && !value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) {
            return value
        }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }
}

extension Logger {
    /// Bytes as printable text when they are, hex otherwise: routing ids and service names in logs.
    static func display(_ bytes: some Collection<UInt8>) -> String {
        if !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x21 && $0 < 0x7F }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "0x" + bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
