extension SettingKey {
    /// The metrics port: every long-running process's.
    static let metricsKeys = [metricsPort, metricsAddress, metricsToken, metricsTokenFile, metricsConnections, metricsTimeout]

    /// `Settings.metricsPort`.
    public static let metricsPort = one(
        "metrics-port", \.metricsPort, .port,
        commands: SettingCommand.processes, placeholder: "PORT", help: "the port serving GET /metrics, /healthz and /readyz (0: none)")
    /// `Settings.metricsAddress`.
    public static let metricsAddress = one(
        "metrics-address", \.metricsAddress, .ipv4,
        commands: SettingCommand.processes, placeholder: "IPV4", help: "the address the metrics port binds; not loopback needs --metrics-token(-file)")
    /// `Settings.metricsToken`.
    public static let metricsToken = optional(
        "metrics-token", \.metricsToken, .bearerToken, none: "no token",
        commands: SettingCommand.processes, placeholder: "TOKEN", help: "a bearer token GET /metrics requires (Authorization: Bearer)", isSecret: true)
    /// `Settings.metricsTokenFile`: the file is read when the setting is resolved.
    public static let metricsTokenFile = optional(
        "metrics-token-file", \.tokenFile, TokenFile.settingType, none: "no token file",
        commands: SettingCommand.processes, placeholder: "FILE", help: "a file (0600) whose first line is the metrics token")
    /// `Settings.metricsConnections`.
    public static let metricsConnections = one(
        "metrics-connections", \.metricsConnections, .integer(1...10_000),
        commands: SettingCommand.processes, placeholder: "N", help: "metrics connections kept open at once")
    /// `Settings.metricsTimeout`.
    public static let metricsTimeout = one(
        "metrics-timeout", \.metricsTimeout, .milliseconds(1...600_000),
        commands: SettingCommand.processes, placeholder: "MS", help: "time a metrics connection has to be answered")
}
