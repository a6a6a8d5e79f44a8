extension SettingKey {
    /// CURVE and protected mode (issue 16, docs/security.md).
    static let securityKeys = [curveSecretKey, curveServerKey, authorizedKeys, insecure]

    /// `Settings.curveSecretKey`.
    public static let curveSecretKey = optional(
        "curve-secret-key", \.curveSecretKey, .nonEmpty("the path of a secret certificate (NAME_secret)"), none: "no CURVE",
        commands: SettingCommand.processes.union(SettingCommand.callers), placeholder: "FILE",
        help: "this process's secret certificate (NAME_secret, 0600): CURVE on every socket")
    /// `Settings.curveServerKey`.
    public static let curveServerKey = optional(
        "curve-server-key", \.curveServerKey, .nonEmpty("the path of the broker's public certificate"), none: "no CURVE",
        commands: SettingCommand.callers.union([.worker]), placeholder: "FILE", help: "the broker's public certificate, to connect to it with CURVE")
    /// `Settings.authorizedKeys`.
    public static let authorizedKeys = optional(
        "authorized-keys", \.authorizedKeys, .nonEmpty("a directory of public certificates"), none: "no CURVE",
        commands: SettingCommand.processes, placeholder: "DIR", help: "the directory of authorised public certificates (reloaded on SIGHUP)")
    /// `Settings.insecure`.
    public static let insecure = `switch`(
        "insecure", \.insecure, commands: SettingCommand.processes, help: "allow binding a non-loopback endpoint without CURVE")
}
