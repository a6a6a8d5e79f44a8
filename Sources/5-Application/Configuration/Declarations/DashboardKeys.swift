extension SettingKey {
    /// The browser dashboard's, served by `serve` and `broker` (issue 18).
    static let dashboardKeys = [dashboardPort, dashboardAddress, dashboardToken]

    /// `Settings.dashboardPort`.
    public static let dashboardPort = one(
        "dashboard-port", \.dashboardPort, .port,
        commands: SettingCommand.brokers, placeholder: "PORT", help: "the port serving the browser dashboard and its event stream (0: none)")
    /// `Settings.dashboardAddress`.
    public static let dashboardAddress = one(
        "dashboard-address", \.dashboardAddress, .ipv4,
        commands: SettingCommand.brokers, placeholder: "IPV4", help: "the address the dashboard binds; not loopback needs --dashboard-token")
    /// `Settings.dashboardToken`.
    public static let dashboardToken = optional(
        "dashboard-token", \.dashboardToken, .bearerToken, none: "no token",
        commands: SettingCommand.brokers, placeholder: "TOKEN",
        help: "a bearer token the dashboard requires (Authorization: Bearer, or ?token=)", isSecret: true)
}
