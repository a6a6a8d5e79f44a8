import CommandSyntax

extension SettingKey {
    /// The command-line option of this setting: its value is checked by `Settings.set(_:to:from:)`,
    /// as from every other source, and its default is `Settings()`'s.
    public var option: Option {
        // A switch: given, it sets the value true (CommandArguments); false is the default.
        if isSwitch { return Option(rawValue, .none, help: help + "\nalso \(environmentVariable)=true") }
        return Option(
            rawValue, .text(placeholder: placeholder), help: help + "\nalso \(environmentVariable)",
            default: Settings().values(of: self).joined(separator: ", "), repeatable: isRepeatable)
    }

    /// The options of `keys`, in `SettingKey.allCases` order, so every command lists them alike.
    public static func options(for keys: Set<SettingKey>) -> [Option] {
        allCases.filter(keys.contains).map(\.option)
    }
}
