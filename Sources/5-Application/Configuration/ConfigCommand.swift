/// `lyceum config`: the effective configuration, one setting a line in the `key = value` format
/// that `--config` reads, each followed by where its value came from.
public enum ConfigCommand {
    /// The listing of `settings` of `keys` (every setting by default); `file` is the
    /// configuration file read, if any.
    public static func render(_ settings: Settings, file: String?, keys: Set<SettingKey> = Set(SettingKey.allCases)) -> String {
        var lines = [
            "# effective configuration; precedence: command line > environment (LYCEUM_*) > file > default",
            "# configuration file: \(file ?? "none")",
        ]
        let width = SettingKey.allCases.map(\.rawValue.count).max() ?? 0
        for key in SettingKey.allCases where keys.contains(key) {
            let origin = settings.origins[key] ?? .defaultValue
            let name = key.rawValue + String(repeating: " ", count: width - key.rawValue.count)
            let values = settings.values(of: key)
            if values.isEmpty {
                lines.append("# \(name) (none: \(key.meaningOfNone ?? "no value"))   # \(origin)")
            } else if key.isSecret {
                // A secret is not echoed to a terminal or a log: only that it is set, and where.
                lines.append("# \(name) (set, not shown)   # \(origin)")
                continue
            }
            for value in values { lines.append("\(name) = \(value)   # \(origin)") }
        }
        return lines.joined(separator: "\n")
    }
}
