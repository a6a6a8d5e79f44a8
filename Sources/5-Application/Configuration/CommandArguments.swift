import CommandSyntax

/// A command line split into settings and positional arguments, for one subcommand.
public struct CommandArguments: Sendable {
    /// The settings: defaults overridden by the flags given.
    public let settings: Settings
    /// The arguments that are not flags, in order.
    public let positionals: [String]

    /// Parses `arguments` (after the subcommand) as `--key value` or `--key=value` flags among
    /// `accepted`, over `settings`; everything else is positional, and `--` ends the flags.
    /// - Throws: `SettingsError` for an unknown flag, a missing value, or a bad value.
    public init(_ arguments: [String], accepting accepted: Set<SettingKey>, over settings: Settings = Settings()) throws(SettingsError) {
        try self.init(Self.parse(arguments, options: SettingKey.options(for: accepted)), accepting: accepted, over: settings)
    }

    /// The settings among `accepted` that `parsed` gives, applied over `settings` in
    /// command-line order; the command's other options (`--config`, `--to`) are left to it.
    /// - Throws: `SettingsError` naming the flag whose value `Settings` refuses.
    public init(_ parsed: ParsedArguments, accepting accepted: Set<SettingKey>, over settings: Settings) throws(SettingsError) {
        var settings = settings
        for (name, value) in parsed.occurrences {
            guard let key = SettingKey(rawValue: name), accepted.contains(key) else { continue }
            // A value-less occurrence is a switch (`--insecure`): it turns the setting on.
            try settings.set(key, to: value ?? "true", from: .commandLine)
        }
        self.settings = settings
        self.positionals = parsed.positionals
    }

    /// `arguments` matched to `options`, any number of positionals allowed (the command's own
    /// declaration has already checked them); a refusal is a `SettingsError` of the command line.
    static func parse(_ arguments: [String], options: [Option]) throws(SettingsError) -> ParsedArguments {
        let syntax = Command("settings", summary: "", options: options, positionals: [Positional("ARGUMENT", help: "", count: .any)])
        do throws(UsageError) {
            return try syntax.parse(arguments)
        } catch {
            let key = error.option.flatMap(SettingKey.init(rawValue:))
            throw SettingsError(key: key, origin: .commandLine, message: key == nil ? error.description : error.message)
        }
    }
}
