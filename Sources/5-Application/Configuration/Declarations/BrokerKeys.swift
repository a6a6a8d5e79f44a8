extension SettingKey {
    /// The broker's: what `serve` and `broker` bind and how much they hold.
    static let brokerKeys = [
        endpoint, queueLimit, queueLimitTotal, highWaterMark, receiveHighWaterMark, maxBatch, unknownServiceTimeout, maxConnections,
        maxInputBytes, maxOutputBytes,
    ]

    /// Per-connection byte budgets: from 64 KiB (one request and its framing) to 1 GiB.
    private static let byteBudgets = (64 << 10)...(1 << 30)

    /// `Settings.endpoints`.
    public static let endpoint = list(
        "endpoint", \.endpoints, .endpoint(example: "tcp://127.0.0.1:5555"),
        commands: SettingCommand.brokers, placeholder: "EP", help: "an endpoint the broker binds for clients")
    /// `Settings.queueLimit`.
    public static let queueLimit = one(
        "queue-limit", \.queueLimit, .integer(1...10_000_000),
        commands: SettingCommand.brokers, placeholder: "N", help: "requests queued per service before queue-full")
    /// `Settings.queueLimitTotal`.
    public static let queueLimitTotal = one(
        "queue-limit-total", \.queueLimitTotal, .integer(1...10_000_000),
        commands: SettingCommand.brokers, placeholder: "N", help: "requests queued for all services before broker-overloaded")
    /// `Settings.highWaterMark`.
    public static let highWaterMark = one(
        "hwm", \.highWaterMark, .integer(0...10_000_000),
        commands: SettingCommand.brokers, placeholder: "N", help: "ZeroMQ high-water mark of the broker's socket for replies, per peer")
    /// `Settings.receiveHighWaterMark`.
    public static let receiveHighWaterMark = one(
        "receive-hwm", \.receiveHighWaterMark, .integer(1...10_000_000),
        commands: SettingCommand.brokers, placeholder: "N", help: "messages from one peer the broker's socket holds unread")
    /// `Settings.maxBatch`.
    public static let maxBatch = one(
        "max-batch-ms", \.maxBatch, .milliseconds(1...1000),
        commands: SettingCommand.brokers, placeholder: "MS", help: "the longest the broker handles other messages before sending replies owed")
    /// `Settings.unknownServiceTimeout`.
    public static let unknownServiceTimeout = one(
        "unknown-service-timeout", \.unknownServiceTimeout, .milliseconds(1...600_000),
        commands: SettingCommand.brokers, placeholder: "MS", help: "how long a request waits for a service or partition with no worker")
    /// `Settings.maxConnections`.
    public static let maxConnections = one(
        "max-connections", \.maxConnections, .integer(1...1_000_000),
        commands: SettingCommand.brokers, placeholder: "N", help: "connections the broker holds at once (lowered to the descriptor limit - 256)")
    /// `Settings.maxInputBytes`.
    public static let maxInputBytes = one(
        "max-input-bytes", \.maxInputBytes, .integer(byteBudgets, "bytes"),
        commands: SettingCommand.brokers, placeholder: "BYTES", help: "bytes a connection may have received that the broker has not taken as messages")
    /// `Settings.maxOutputBytes`.
    public static let maxOutputBytes = one(
        "max-output-bytes", \.maxOutputBytes, .integer(byteBudgets, "bytes"),
        commands: SettingCommand.brokers, placeholder: "BYTES", help: "bytes sent to a peer that it has not read before it is cut")
}
