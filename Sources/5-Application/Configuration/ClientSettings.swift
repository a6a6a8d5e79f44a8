/// What a command that calls the brokers needs of the settings (`call`, `status`, `partitions
/// move`): the brokers, tried in order, and how long each may take to answer.
public struct ClientSettings: Sendable {
    /// The brokers, tried in order, failing over to the next.
    public var brokers: [String]
    /// How long one broker may take to answer.
    public var timeout: Duration

    /// The client settings of `settings`.
    public init(_ settings: Settings) {
        brokers = settings.brokers
        timeout = settings.timeout
    }
}

extension Settings {
    /// What a command that calls the brokers needs of these settings.
    public var client: ClientSettings { ClientSettings(self) }
}
