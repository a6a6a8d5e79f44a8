/// Builds Prometheus text exposition: `# HELP`/`# TYPE` lines, then samples with escaped labels.
struct PrometheusText {
    private(set) var output = ""

    mutating func family(_ name: String, _ type: String, _ help: String) {
        output += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        output += name
        if !labels.isEmpty {
            output += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",") + "}"
        }
        output += " " + Self.number(value) + "\n"
    }

    /// Integers without a fraction, other values as Swift prints them.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// A label value with `\`, `"` and newlines escaped, as the format requires.
    static func escaped(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
