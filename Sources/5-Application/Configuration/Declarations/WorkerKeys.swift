extension SettingKey {
    /// A worker process's: which services, how many sessions, how it reconnects (`worker`).
    static let workerKeys = [service, sessions, mdp, reconnectInitial, reconnectMaximum]

    /// Worker sessions per service: at least one, and few enough that the broker's queues stay the bound.
    static let sessionRange = 1...64

    /// `Settings.services`: a name given twice is served once.
    public static let service = list(
        "service", \.services, .identifier("a service name"), none: "every service", distinct: true,
        commands: [.worker], placeholder: "NAME", help: "a service to serve (none given: every service)")
    /// `Settings.sessionsPerService`.
    public static let sessions = one(
        "sessions", \.sessionsPerService, .integer(sessionRange),
        commands: [.worker], placeholder: "N", help: "worker sessions per service (\(sessionRange.lowerBound)-\(sessionRange.upperBound))")
    /// `Settings.mdp`.
    public static let mdp = one(
        "mdp", \.mdp, SettingType(expecting: "7 or 18", { text in text == "7" ? 7 : text == "18" ? 18 : nil }, format: { String($0) }),
        commands: [.worker], placeholder: "VERSION", help: "the Majordomo spoken to brokers: 7 (7/MDP) or 18 (18/MDP, majortomo's framing)")
    /// `Settings.reconnectInitial`.
    public static let reconnectInitial = one(
        "reconnect-initial", \.reconnectInitial, .milliseconds(1...3_600_000),
        commands: [.worker], placeholder: "MS", help: "a worker's first wait before reconnecting; doubled up to --reconnect-max")
    /// `Settings.reconnectMaximum`.
    public static let reconnectMaximum = one(
        "reconnect-max", \.reconnectMaximum, .milliseconds(1...3_600_000),
        commands: [.worker], placeholder: "MS", help: "the longest wait between a worker's reconnection attempts")
}
