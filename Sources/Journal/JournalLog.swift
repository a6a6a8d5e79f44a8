import Foundation

/// The journal's structured log: one `logfmt` line per event on stderr, with a level.
///
/// Kept tiny and internal on purpose, so that a shared logger can replace it in one place.
enum JournalLog {
    enum Level: String { case info, warning, error, critical }

    static func write(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        var line = "level=\(level.rawValue) module=journal msg=\(quoted(message))"
        for (key, value) in fields { line += " \(key)=\(quoted(value))" }
        line += "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    private static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\n" }
        guard needsQuotes else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }
}
