import CommandSyntax
import Foundation

extension Command {
    /// `--print-settings`: what every command that takes settings accepts, to see them resolved.
    public static let printSettingsOption = Option(
        "print-settings", .none, help: "print the settings this command would run with, and where each came from; run nothing")

    /// A command that takes the settings `keys` besides its own `options`: its options are
    /// those, the settings' (each saying its `LYCEUM_…` variable), `--config` and
    /// `--print-settings`. It runs with its settings resolved from every source in one
    /// precedence (flags > environment > file > defaults, by `ConfigurationSources`): the one
    /// way a command reads a setting, so none can read one from its flags alone. With
    /// `--print-settings` it prints them as `lyceum config` does and exits 0 without running.
    public static func withSettings(
        _ name: String, summary: String, discussion: String? = nil, keys: Set<SettingKey>, options: [Option] = [],
        positionals: [Positional] = [], subcommands: [Command] = [], run: @escaping @Sendable (CommandArguments, ConfigurationSources) throws(UsageError) -> Int32
    ) -> Command {
        Command(
            name, summary: summary, discussion: discussion,
            options: options + ConfigurationSources.options(accepting: keys) + [printSettingsOption], positionals: positionals,
            subcommands: subcommands
        ) { parsed throws(UsageError) in
            let sources = ConfigurationSources(commandLine: parsed, environment: ProcessInfo.processInfo.environment, accepting: keys)
            let resolved: CommandArguments
            do throws(SettingsError) {
                resolved = try sources.resolve()
            } catch {
                throw UsageError(error.description)
            }
            if parsed.contains(printSettingsOption.name) {
                print(ConfigCommand.render(resolved.settings, file: sources.configFile, keys: keys))
                return 0
            }
            return try run(resolved, sources)
        }
    }
}
