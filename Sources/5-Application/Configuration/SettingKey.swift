/// One setting, declared once: its name (the flag `--NAME`, the configuration file's key and,
/// in capitals, the variable `LYCEUM_NAME`), the commands that take it, its `--help` line, and
/// its type: how a text becomes its value in `Settings` (checked the same way from every source)
/// and how the value is written back (`lyceum config`, `--help`'s defaults). Parsing, `set`,
/// `values(of:)`, the listing, the help and docs/operations.md's table (checked by
/// `SettingsTableTests`) all come from these declarations, which `Declarations/` groups by role.
public struct SettingKey: Hashable, Sendable, CustomStringConvertible {
    /// The setting's name, e.g. `log-level`.
    public let rawValue: String
    /// The commands that take the setting (`lyceum config` takes every one).
    public let commands: Set<SettingCommand>
    /// The value's placeholder in `--help`, e.g. `MS`.
    let placeholder: String
    /// One line for `--help`; docs/operations.md says more.
    let help: String
    /// Whether the setting takes several values, one per occurrence.
    public let isRepeatable: Bool
    /// Whether the setting is a switch: given on the command line without a value, it is
    /// `true`; a configuration file may give it as a JSON boolean.
    public let isSwitch: Bool
    /// Whether the value is a secret, which `lyceum config` says is set but never shows.
    public let isSecret: Bool
    /// What no value means, for a setting that may have none (`lyceum config` says it).
    let meaningOfNone: String?
    /// Stores a text as the value: `adding` to a repeatable setting's values, or replacing them.
    let store: @Sendable (inout Settings, String, _ adding: Bool) throws(SettingRefusal) -> Void
    /// The value as the texts `store` accepts; one per value of a repeatable setting.
    let texts: @Sendable (Settings) -> [String]

    /// The setting named `name`, if any.
    public init?(rawValue name: String) {
        guard let key = Self.byName[name] else { return nil }
        self = key
    }

    /// Every setting, role by role (`SettingRole`), each role's in its declared order.
    public static let allCases: [SettingKey] = SettingRole.allCases.flatMap(\.keys)

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The settings `command` takes.
    public static func taken(by command: SettingCommand) -> Set<SettingKey> {
        Set(allCases.filter { $0.commands.contains(command) })
    }

    /// The flag, e.g. `--log-level`.
    public var flag: String { "--" + rawValue }

    /// The environment variable, e.g. `LYCEUM_LOG_LEVEL`.
    public var environmentVariable: String {
        "LYCEUM_" + String(rawValue.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// The name.
    public var description: String { rawValue }

    /// Settings are the same when their names are.
    public static func == (left: SettingKey, right: SettingKey) -> Bool { left.rawValue == right.rawValue }

    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

extension SettingKey {
    /// A setting of one value, stored at `path`.
    static func one<Value>(
        _ name: String, _ path: WritableKeyPath<Settings, Value> & Sendable, _ type: SettingType<Value>,
        commands: Set<SettingCommand>, placeholder: String, help: String, isSecret: Bool = false
    ) -> SettingKey {
        SettingKey(
            name, commands: commands, placeholder: placeholder, help: help, isSecret: isSecret,
            store: { settings, text, _ throws(SettingRefusal) in settings[keyPath: path] = try type.parse(text) },
            texts: { settings in [type.format(settings[keyPath: path])] })
    }

    /// A setting that may have no value (`nil`, meaning `none`), stored at `path`.
    static func optional<Value>(
        _ name: String, _ path: WritableKeyPath<Settings, Value?> & Sendable, _ type: SettingType<Value>, none: String,
        commands: Set<SettingCommand>, placeholder: String, help: String, isSecret: Bool = false
    ) -> SettingKey {
        SettingKey(
            name, commands: commands, placeholder: placeholder, help: help, isSecret: isSecret, meaningOfNone: none,
            store: { settings, text, _ throws(SettingRefusal) in settings[keyPath: path] = try type.parse(text) },
            texts: { settings in settings[keyPath: path].map { [type.format($0)] } ?? [] })
    }

    /// A repeatable setting, whose values are stored at `path`; `distinct` drops a value given twice.
    static func list<Value: Equatable>(
        _ name: String, _ path: WritableKeyPath<Settings, [Value]> & Sendable, _ type: SettingType<Value>, none: String? = nil,
        distinct: Bool = false, commands: Set<SettingCommand>, placeholder: String, help: String
    ) -> SettingKey {
        SettingKey(
            name, commands: commands, placeholder: placeholder, help: help, isRepeatable: true, meaningOfNone: none,
            store: { settings, text, adding throws(SettingRefusal) in
                let value = try type.parse(text)
                let current = adding ? settings[keyPath: path] : []
                settings[keyPath: path] = distinct && current.contains(value) ? current : current + [value]
            },
            texts: { settings in settings[keyPath: path].map(type.format) })
    }

    /// A switch: `--NAME` alone turns it on; other sources give `true` or `false`.
    static func `switch`(
        _ name: String, _ path: WritableKeyPath<Settings, Bool> & Sendable, commands: Set<SettingCommand>, help: String
    ) -> SettingKey {
        SettingKey(
            name, commands: commands, placeholder: "", help: help, isSwitch: true,
            store: { settings, text, _ throws(SettingRefusal) in settings[keyPath: path] = try SettingType.boolean.parse(text) },
            texts: { settings in [String(settings[keyPath: path])] })
    }

    private init(
        _ name: String, commands: Set<SettingCommand>, placeholder: String, help: String, isRepeatable: Bool = false,
        isSwitch: Bool = false, isSecret: Bool = false, meaningOfNone: String? = nil,
        store: @escaping @Sendable (inout Settings, String, Bool) throws(SettingRefusal) -> Void,
        texts: @escaping @Sendable (Settings) -> [String]
    ) {
        rawValue = name
        self.commands = commands
        self.placeholder = placeholder
        self.help = help
        self.isRepeatable = isRepeatable
        self.isSwitch = isSwitch
        self.isSecret = isSecret
        self.meaningOfNone = meaningOfNone
        self.store = store
        self.texts = texts
    }
}

/// A command that takes settings, as the settings' declarations name it (`lyceum config`, which
/// takes them all, aside).
public enum SettingCommand: String, CaseIterable, Sendable {
    /// `lyceum serve`.
    case serve
    /// `lyceum broker`.
    case broker
    /// `lyceum worker`.
    case worker
    /// `lyceum call`.
    case call
    /// `lyceum status`.
    case status
    /// `lyceum bench`.
    case bench
    /// `lyceum watch`.
    case watch
    /// `lyceum backup`.
    case backup
    /// `lyceum restore`.
    case restore
    /// `lyceum partitions move`.
    case partitionsMove = "partitions move"
    /// `lyceum partitions rebalance`.
    case partitionsRebalance = "partitions rebalance"

    /// The long-running processes: `serve`, `broker`, `worker`.
    static let processes: Set<SettingCommand> = [.serve, .broker, .worker]
    /// The processes that run a broker: `serve`, `broker`.
    static let brokers: Set<SettingCommand> = [.serve, .broker]
    /// The processes that host the learning services: `serve`, `worker`.
    static let hosts: Set<SettingCommand> = [.serve, .worker]
    /// The commands that call brokers as clients.
    static let callers: Set<SettingCommand> = [.call, .status, .bench, .watch, .backup, .partitionsMove, .partitionsRebalance]
    /// The callers that wait for each answer a bounded time (`timeout`).
    static let waitingCallers: Set<SettingCommand> = [.call, .status, .backup, .partitionsMove, .partitionsRebalance]
}
