import CommandSyntax
import Foundation
import JSON

/// Builds a command's settings from every source in one precedence: command-line flags, then
/// `LYCEUM_…` environment variables, then a configuration file (`--config FILE` or
/// `LYCEUM_CONFIG`), then the defaults. Every source goes through `Settings.set(_:to:from:)`,
/// so a bad value is refused the same way wherever it came from.
public struct ConfigurationSources: Sendable {
    /// The command line as the command's declaration parsed it, `--config` included.
    public let commandLine: ParsedArguments
    /// The process environment; only `LYCEUM_` variables are read.
    public let environment: [String: String]
    /// The settings the command takes; a flag of another name is the command's own option.
    public let accepted: Set<SettingKey>

    /// The environment variable naming a configuration file when no `--config` flag does.
    public static let configVariable = "LYCEUM_CONFIG"

    /// Sources for one command whose declaration parsed `commandLine`.
    public init(commandLine: ParsedArguments, environment: [String: String], accepting accepted: Set<SettingKey>) {
        self.commandLine = commandLine
        self.environment = environment
        self.accepted = accepted
    }

    /// Sources for a command line of settings and positionals alone (`--config` and the flags
    /// of `accepted`).
    /// - Throws: `SettingsError` for an unknown flag or a missing value.
    public init(arguments: [String], environment: [String: String], accepting accepted: Set<SettingKey>) throws(SettingsError) {
        self.init(
            commandLine: try CommandArguments.parse(arguments, options: Self.options(accepting: accepted)),
            environment: environment, accepting: accepted)
    }

    /// The settings and positional arguments, every source applied and conflicts checked.
    /// Read again on SIGHUP, so that a changed file or level takes effect without a restart.
    /// - Throws: `SettingsError` naming the key and source of the first bad value, unknown key
    ///   or conflict.
    public func resolve() throws(SettingsError) -> CommandArguments {
        var settings = Settings()
        if let path = try configFileGiven() {
            try Self.apply(file: path, to: &settings)
        }
        try applyEnvironment(to: &settings)
        let resolved = try CommandArguments(commandLine, accepting: accepted, over: settings)
        try resolved.settings.checkConflicts()
        return resolved
    }

    /// The configuration file in effect, if any.
    public var configFile: String? {
        do {
            return try configFileGiven()
        } catch {
            // An empty --config is reported by resolve(); here it just names no file.
            return nil
        }
    }

    private func configFileGiven() throws(SettingsError) -> String? {
        guard let path = commandLine.text(Self.configOption.name) else { return environment[Self.configVariable] }
        guard !path.isEmpty else { throw SettingsError(key: nil, origin: .commandLine, message: "--config: expected a file, got ''") }
        return path
    }

    /// `--config FILE`: the option every command with settings takes besides the settings' own.
    public static let configOption = Option(
        "config", .text(placeholder: "FILE"), help: "read settings from FILE (JSON or key = value)\nalso \(configVariable)")

    /// The options of a command that accepts the settings `keys`: theirs and `--config`.
    public static func options(accepting keys: Set<SettingKey>) -> [Option] {
        [configOption] + SettingKey.options(for: keys)
    }

    private func applyEnvironment(to settings: inout Settings) throws(SettingsError) {
        for (variable, value) in environment.sorted(by: { $0.key < $1.key })
        where variable.hasPrefix("LYCEUM_") && variable != Self.configVariable {
            let origin = SettingOrigin.environment(variable: variable)
            guard let key = SettingKey.allCases.first(where: { $0.environmentVariable == variable }) else {
                throw SettingsError(key: nil, origin: origin, message: "unknown setting; known variables: "
                    + (SettingKey.allCases.map(\.environmentVariable) + [Self.configVariable]).joined(separator: ", "))
            }
            let values = key.isRepeatable ? value.split(separator: ",").map(String.init) : [value]
            for element in values.isEmpty ? [""] : values {
                try settings.set(key, to: element, from: origin)
            }
        }
    }

    /// Applies a JSON object file (`{"sessions": 4, "endpoint": ["tcp://…"]}`) or a `key = value`
    /// file (one setting a line, `#` comments, repeated keys for repeatable settings).
    static func apply(file path: String, to settings: inout Settings) throws(SettingsError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SettingsError(key: nil, origin: .file(path: path, line: nil), message: "cannot read the configuration file: \(error.localizedDescription)")
        }
        if let first = text.drop(while: \.isWhitespace).first, first == "{" || first == "[" {
            try applyJSON(text, path: path, to: &settings)
        } else {
            try applyLines(text, path: path, to: &settings)
        }
    }

    private static func key(named name: String, origin: SettingOrigin) throws(SettingsError) -> SettingKey {
        guard let key = SettingKey(rawValue: name) else {
            throw SettingsError(key: nil, origin: origin, message: "unknown setting '\(name)'; known settings: "
                + SettingKey.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return key
    }

    private static func applyLines(_ text: String, path: String, to settings: inout Settings) throws(SettingsError) {
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let origin = SettingOrigin.file(path: path, line: index + 1)
            guard let equals = line.firstIndex(of: "=") else {
                throw SettingsError(key: nil, origin: origin, message: "expected 'key = value', got '\(line)'")
            }
            let key = try key(named: line[..<equals].trimmingCharacters(in: .whitespaces), origin: origin)
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            // A comment may follow the value after whitespace, as `lyceum config` writes it.
            if let comment = value.range(of: #"\s+#"#, options: .regularExpression) {
                value = value[..<comment.lowerBound].trimmingCharacters(in: .whitespaces)
            }
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            try settings.set(key, to: value, from: origin)
        }
    }

    private static func applyJSON(_ text: String, path: String, to settings: inout Settings) throws(SettingsError) {
        let origin = SettingOrigin.file(path: path, line: nil)
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONParser().parse(text)
        } catch {
            throw SettingsError(key: nil, origin: origin, message: "not valid JSON: \(error)")
        }
        guard case .object(let members) = value else {
            throw SettingsError(key: nil, origin: origin, message: "expected a JSON object of settings")
        }
        for member in members {
            let key = try key(named: member.key, origin: origin)
            let elements: [JSONValue]
            if case .array(let array) = member.value {
                guard key.isRepeatable else {
                    throw SettingsError(key: key, origin: origin, message: "takes one value, not a list")
                }
                elements = array
            } else {
                elements = [member.value]
            }
            for element in elements {
                try settings.set(key, to: try jsonText(element, key: key, origin: origin), from: origin)
            }
        }
    }

    private static func jsonText(_ value: JSONValue, key: SettingKey, origin: SettingOrigin) throws(SettingsError) -> String {
        switch value {
        case .string(let text): return text
        case .integer(let number): return String(number)
        // A switch (`insecure`, `join`) may be a JSON boolean.
        case .bool(let flag) where key.isSwitch: return String(flag)
        default: throw SettingsError(key: key, origin: origin, message: "expected a string or an integer, got a \(value.typeName)")
        }
    }
}
