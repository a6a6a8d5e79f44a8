import LyceumLogging

extension SettingKey {
    /// Logs and heartbeats: every long-running process's.
    static let processKeys = [logLevel, logFormat, logRateLimit, heartbeatInterval, heartbeatLiveness]

    /// `Settings.logLevel`.
    public static let logLevel = one(
        "log-level", \.logLevel,
        SettingType(
            expecting: "one of " + LogLevel.allCases.map(\.description).joined(separator: ", "), LogLevel.init(name:), format: \.description),
        commands: SettingCommand.processes, placeholder: "LEVEL", help: "the least severe level logged")
    /// `Settings.logFormat`: `auto` is `nil`.
    public static let logFormat = one(
        "log-format", \.logFormat,
        SettingType(
            expecting: "auto, " + LogFormat.allCases.map(\.rawValue).joined(separator: ", "),
            { text in text == "auto" ? .some(nil) : LogFormat(rawValue: text).map { .some($0) } }, format: { $0?.rawValue ?? "auto" }),
        commands: SettingCommand.processes, placeholder: "FORMAT", help: "auto, human, logfmt or json")
    /// `Settings.logRateLimit`.
    public static let logRateLimit = one(
        "log-rate-limit", \.logRateLimit, .integer(0...1_000_000, "lines per second (0: no limit)"),
        commands: SettingCommand.processes, placeholder: "N", help: "log lines a second per message below critical (0: no limit)")
    /// `Settings.heartbeatInterval`.
    public static let heartbeatInterval = one(
        "heartbeat-interval", \.heartbeatInterval, .milliseconds(10...86_400_000),
        commands: SettingCommand.processes, placeholder: "MS", help: "Majordomo heartbeat interval")
    /// `Settings.heartbeatLiveness`.
    public static let heartbeatLiveness = one(
        "heartbeat-liveness", \.heartbeatLiveness, .integer(1...1000),
        commands: SettingCommand.processes, placeholder: "N", help: "heartbeat intervals of silence before a peer is gone")
}
