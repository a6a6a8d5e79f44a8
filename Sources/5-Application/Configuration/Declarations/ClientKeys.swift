extension SettingKey {
    /// Calling brokers: a worker's registrations and every client command's calls.
    static let clientKeys = [broker, timeout]

    /// `call` timeouts in milliseconds: up to ten minutes.
    static let timeoutRange = 1...600_000

    /// `Settings.brokers`.
    public static let broker = list(
        "broker", \.brokers, .endpoint(example: "tcp://127.0.0.1:5555"),
        commands: SettingCommand.callers.union([.worker]), placeholder: "EP",
        help: "a broker: worker registers with every one; call and status try them in order")
    /// `Settings.timeout`.
    public static let timeout = one(
        "timeout", \.timeout, .milliseconds(timeoutRange),
        commands: SettingCommand.waitingCallers, placeholder: "MS", help: "how long to wait for a reply")
}
