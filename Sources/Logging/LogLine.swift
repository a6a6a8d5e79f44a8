#if canImport(Glibc)
import Glibc
#endif

/// One log line being formatted; written with a single `write(2)` so that lines from
/// several threads never interleave.
struct LogLine {
    let format: LogFormat
    private(set) var bytes: [UInt8] = []

    init(format: LogFormat) {
        self.format = format
        bytes.reserveCapacity(160)
    }

    mutating func append(level: LogLevel, component: String, message: String, fields: KeyValuePairs<String, String>) {
        let time = Self.timestamp()
        switch format {
        case .human:
            append("\(time) \(level.description.uppercased().padding(8)) \(component): \(message)")
            for (key, value) in fields { append(" \(key)=\(Self.logfmtQuoted(value))") }
        case .logfmt:
            append("ts=\(time) level=\(level) component=\(Self.logfmtQuoted(component)) msg=\(Self.logfmtQuoted(message))")
            for (key, value) in fields { append(" \(key)=\(Self.logfmtQuoted(value))") }
        case .json:
            append("{\"ts\":\"\(time)\",\"level\":\"\(level)\",\"component\":\(Self.jsonQuoted(component)),\"msg\":\(Self.jsonQuoted(message))")
            for (key, value) in fields { append(",\(Self.jsonQuoted(key)):\(Self.jsonQuoted(value))") }
            append("}")
        }
        bytes.append(0x0A)
    }

    func write(to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                // A log line that cannot be written has nowhere better to go.
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }

    private mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// UTC time with milliseconds, RFC 3339: `2026-11-30T16:04:05.123Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        return "\(parts.tm_year + 1900)-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(now.tv_nsec / 1_000_000), width: 3))Z"
    }

    private static func pad(_ value: Int32, width: Int = 2) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// A logfmt value: bare when it has no space, quote, `=` or control character; quoted otherwise.
    static func logfmtQuoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0.value < 0x20 }
        return needsQuotes ? jsonQuoted(value) : value
    }

    /// A JSON string literal, escaping quotes, backslashes and control characters.
    static func jsonQuoted(_ value: String) -> String {
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}

extension String {
    /// The string padded with spaces to at least `width` characters.
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
