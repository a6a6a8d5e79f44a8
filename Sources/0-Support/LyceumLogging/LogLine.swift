#if canImport(Glibc)
import Glibc
#endif
import LyceumSupport

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
        let time = RFC3339.now()
        switch format {
        case .human:
            append("\(time) \(level.description.uppercased().padding(8)) \(component): \(message)")
            for (key, value) in fields { append(" \(key)=\(Self.logfmtQuoted(value))") }
        case .logfmt:
            append("ts=\(time) level=\(level) component=\(Self.logfmtQuoted(component)) msg=\(Self.logfmtQuoted(message))")
            for (key, value) in fields { append(" \(key)=\(Self.logfmtQuoted(value))") }
        case .json:
            append("{\"ts\":\"\(time)\",\"level\":\"\(level)\",\"component\":\(JSONString.quoted(component)),\"msg\":\(JSONString.quoted(message))")
            for (key, value) in fields { append(",\(JSONString.quoted(key)):\(JSONString.quoted(value))") }
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

    /// A logfmt value: bare when it has no space, quote, `=` or control character; quoted otherwise.
    static func logfmtQuoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0.value < 0x20 }
        return needsQuotes ? JSONString.quoted(value) : value
    }
}

extension String {
    /// The string padded with spaces to at least `width` characters.
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
