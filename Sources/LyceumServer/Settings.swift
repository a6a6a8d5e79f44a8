import Journal
import Logging

/// Every setting a Lyceum command reads, with its default. Values arrive as text from a source
/// (today the command line); `set(_:to:from:)` checks and stores them, so that further sources
/// (environment variables, a configuration file) can be applied beneath the flags in precedence
/// order with the same checks and error messages.
public struct Settings: Sendable {
    /// Endpoints the broker binds for clients (`serve`, `broker`).
    public var endpoints = ["tcp://127.0.0.1:5555"]
    /// The broker a worker or a client connects to (`worker`, `call`).
    public var broker = "tcp://127.0.0.1:5555"
    /// The data directory; each stateful service keeps its journal in a subdirectory named after it.
    public var dataDirectory = "./lyceum-data"
    /// Catalog files or directories; empty means the sample catalog that ships with Lyceum.
    public var catalogPaths: [String] = []
    /// The services a `worker` process serves.
    public var services = ServiceName.allCases
    /// Worker sessions (threads, each serving one request at a time) per service.
    public var sessionsPerService = 4
    /// When a journaled write counts as durable.
    public var durability = DurabilityPolicy.always
    /// How long `call` waits for a reply.
    public var timeout = Duration.milliseconds(5000)
    /// The least severe level logged.
    public var logLevel = LogLevel.info

    /// Where each setting that is not a default came from.
    public private(set) var origins: [SettingKey: SettingOrigin] = [:]

    /// The defaults.
    public init() {}

    /// Stores `text` as the value of `key`, coming from `origin`. A repeatable setting's first
    /// value from an origin replaces what lower-precedence origins gave; later ones add to it.
    /// - Throws: `SettingsError` naming the key and origin when `text` is not a valid value.
    public mutating func set(_ key: SettingKey, to text: String, from origin: SettingOrigin) throws(SettingsError) {
        let adding = key.isRepeatable && origins[key] == origin
        func invalid(_ expectation: String) -> SettingsError {
            SettingsError(key: key, origin: origin, message: "expected \(expectation), got '\(text)'")
        }
        switch key {
        case .endpoint:
            guard Self.isEndpoint(text) else { throw invalid("an endpoint such as tcp://127.0.0.1:5555") }
            endpoints = adding ? endpoints + [text] : [text]
        case .broker:
            guard Self.isEndpoint(text) else { throw invalid("an endpoint such as tcp://127.0.0.1:5555") }
            broker = text
        case .data:
            guard !text.isEmpty else { throw invalid("a directory") }
            dataDirectory = text
        case .catalog:
            guard !text.isEmpty else { throw invalid("a catalog file or directory") }
            catalogPaths = adding ? catalogPaths + [text] : [text]
        case .service:
            guard let service = ServiceName(rawValue: text) else {
                throw invalid("one of " + ServiceName.allCases.map(\.rawValue).joined(separator: ", "))
            }
            let current = adding ? services : []
            services = current.contains(service) ? current : current + [service]
        case .sessions:
            guard let count = Int(text), Self.sessionRange.contains(count) else {
                throw invalid("an integer from \(Self.sessionRange.lowerBound) to \(Self.sessionRange.upperBound)")
            }
            sessionsPerService = count
        case .durability:
            guard let policy = DurabilityPolicy(text) else { throw invalid("always, none, interval or interval:MILLISECONDS") }
            durability = policy
        case .timeout:
            guard let milliseconds = Int(text), Self.timeoutRange.contains(milliseconds) else {
                throw invalid("milliseconds from \(Self.timeoutRange.lowerBound) to \(Self.timeoutRange.upperBound)")
            }
            timeout = .milliseconds(milliseconds)
        case .logLevel:
            guard let level = LogLevel(name: text) else {
                throw invalid("one of " + LogLevel.allCases.map(\.description).joined(separator: ", "))
            }
            logLevel = level
        }
        origins[key] = origin
    }

    /// Worker sessions per service: at least one, and few enough that threads stay cheap.
    public static let sessionRange = 1...64
    /// `call` timeouts in milliseconds: up to ten minutes.
    public static let timeoutRange = 1...600_000

    private static func isEndpoint(_ text: String) -> Bool {
        ["tcp://", "ipc://", "inproc://"].contains { text.hasPrefix($0) && text.count > $0.count }
    }
}

/// The name of one setting, as written after `--` on the command line.
public enum SettingKey: String, CaseIterable, Sendable {
    /// `Settings.endpoints`.
    case endpoint
    /// `Settings.broker`.
    case broker
    /// `Settings.dataDirectory`.
    case data
    /// `Settings.catalogPaths`.
    case catalog
    /// `Settings.services`.
    case service
    /// `Settings.sessionsPerService`.
    case sessions
    /// `Settings.durability`.
    case durability
    /// `Settings.timeout`.
    case timeout
    /// `Settings.logLevel`.
    case logLevel = "log-level"

    /// Whether the setting takes several values, one per occurrence.
    public var isRepeatable: Bool { [.endpoint, .catalog, .service].contains(self) }

    /// The flag, e.g. `--log-level`.
    public var flag: String { "--" + rawValue }
}

/// Where a setting's value came from, most precedent last.
public enum SettingOrigin: Sendable, Equatable, CustomStringConvertible {
    /// A command-line flag.
    case commandLine

    /// How error messages name the origin.
    public var description: String {
        switch self {
        case .commandLine: "the command line"
        }
    }
}

/// A setting refused: its key, where the value came from, and what was wrong.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting, or `nil` when the problem is not one setting's (e.g. a stray argument).
    public let key: SettingKey?
    /// Where the refused value came from.
    public let origin: SettingOrigin
    /// What was wrong.
    public let message: String

    /// A refusal of `key`'s value from `origin`.
    public init(key: SettingKey?, origin: SettingOrigin, message: String) {
        self.key = key
        self.origin = origin
        self.message = message
    }

    /// `--sessions: expected an integer from 1 to 64, got 'x'` for the command line.
    public var description: String {
        switch origin {
        case .commandLine: key.map { "\($0.flag): \(message)" } ?? message
        }
    }
}

/// The learning services Lyceum can serve, by their Majordomo service names.
public enum ServiceName: String, CaseIterable, Sendable {
    /// The read-only course catalog.
    case catalog
    /// Learners' progress through courses, journaled in `DATA/progress`.
    case progress
    /// Learners' book libraries, journaled in `DATA/books`.
    case books
}
