extension SettingKey {
    /// Events: where they are published, forwarded and snapshotted (protocol/events.md).
    static let eventsKeys = [eventsEndpoint, snapshotEndpoint, forwarderEndpoint, snapshotPageBytes]

    /// The bytes one snapshot page may be set to; `EventSubscription.SnapshotProtocol.pageBytesRange`,
    /// which the publisher checks, is the same (`SettingBoundsTests`).
    public static let snapshotPageBytesRange = 4096...(64 << 20)

    /// `Settings.eventsEndpoint`.
    public static let eventsEndpoint = one(
        "events-endpoint", \.eventsEndpoint,
        SettingType(
            expecting: "an endpoint such as \(DefaultEventEndpoints.publish), or \(DefaultEventEndpoints.none) for no events",
            { text in SettingType.isEndpoint(text) || text == DefaultEventEndpoints.none ? text : nil }, format: { $0 }),
        commands: SettingCommand.brokers, placeholder: "EP", help: "where events are published (none: no events)")
    /// `Settings.snapshotEndpoint`.
    public static let snapshotEndpoint = one(
        "snapshot-endpoint", \.snapshotEndpoint, .endpoint(example: DefaultEventEndpoints.snapshot),
        commands: SettingCommand.hosts, placeholder: "EP",
        help: "where serve answers event snapshot requests; a worker: loopback, any port, unless given")
    /// `Settings.forwarderEndpoints`.
    public static let forwarderEndpoint = list(
        "forwarder-endpoint", \.forwarderEndpoints, .endpoint(example: DefaultEventEndpoints.forwarderInput),
        commands: [.broker, .worker], placeholder: "EP",
        help: "where the broker's forwarder takes workers' events in; a worker publishes into every one")
    /// `Settings.snapshotPageBytes`.
    public static let snapshotPageBytes = one(
        "snapshot-page-bytes", \.snapshotPageBytes, .integer(snapshotPageBytesRange, "bytes"),
        commands: SettingCommand.hosts, placeholder: "BYTES", help: "the most bytes of one event snapshot page")
}
