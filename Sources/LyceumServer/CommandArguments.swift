/// A command line split into settings and positional arguments, for one subcommand.
public struct CommandArguments: Sendable {
    /// The settings: defaults overridden by the flags given.
    public let settings: Settings
    /// The arguments that are not flags, in order.
    public let positionals: [String]
    /// Whether `--help` or `-h` was given.
    public let wantsHelp: Bool

    /// Parses `arguments` (after the subcommand) as `--key value` or `--key=value` flags among
    /// `accepted`, over `settings`; everything else is positional, and `--` ends the flags.
    /// - Throws: `SettingsError` for an unknown flag, a missing value, or a bad value.
    public init(_ arguments: [String], accepting accepted: Set<SettingKey>, over settings: Settings = Settings()) throws(SettingsError) {
        var settings = settings
        var positionals: [String] = []
        var wantsHelp = false
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                positionals += remaining
                break
            }
            if argument == "--help" || argument == "-h" {
                wantsHelp = true
                continue
            }
            guard argument.hasPrefix("-"), argument.count > 1 else {
                positionals.append(argument)
                continue
            }
            let (name, inlineValue) = Self.split(argument)
            guard let key = SettingKey(rawValue: name), accepted.contains(key), argument.hasPrefix("--") else {
                let known = accepted.map(\.flag).sorted().joined(separator: ", ")
                throw SettingsError(key: nil, origin: .commandLine, message: "unknown flag \(argument.split(separator: "=")[0]); this command takes \(known.isEmpty ? "no flags" : known)")
            }
            guard let value = inlineValue ?? remaining.popFirst() else {
                throw SettingsError(key: key, origin: .commandLine, message: "needs a value")
            }
            try settings.set(key, to: value, from: .commandLine)
        }
        self.settings = settings
        self.positionals = positionals
        self.wantsHelp = wantsHelp
    }

    private static func split(_ argument: String) -> (name: String, value: String?) {
        let body = argument.drop { $0 == "-" }
        guard let equals = body.firstIndex(of: "=") else { return (String(body), nil) }
        return (String(body[..<equals]), String(body[body.index(after: equals)...]))
    }
}
