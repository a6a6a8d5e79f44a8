import CommandSyntax
import Configuration
import EventSubscription
import Security
import ZeroMQ

/// What `lyceum watch` was asked for, read from its command line.
struct WatchOptions {
    /// How events are shown.
    enum Output {
        /// A redrawn dashboard, when standard output is a terminal.
        case dashboard
        /// One readable line per event.
        case lines
        /// One event body (JSON) per line.
        case json
    }

    /// The events endpoints (PUB or forwarder XPUB), all subscribed to: with several brokers,
    /// their forwarders, so that events keep coming while one is down.
    var eventsEndpoints = [DefaultEventEndpoints.publish]
    /// The snapshot endpoint; `nil` starts empty.
    var snapshotEndpoint: String? = DefaultEventEndpoints.snapshot
    /// Only this course, when set.
    var course: String?
    /// Only this learner, when set.
    var learner: String?
    /// How events are shown; `nil` chooses by whether standard output is a terminal.
    var output: Output?
    /// Exit after this many events, when set.
    var limit: Int?
    /// The broker whose catalog service gives the courses' titles (the first of the setting
    /// `broker`); `nil` shows ids.
    var broker: String?
    /// How both sockets authenticate: CURVE with the settings `curve-secret-key` and `curve-server-key`.
    var security = SocketSecurity.plaintext

    /// The options of `lyceum watch`.
    static let declarations: [Option] = [
        Option("connect", .text(placeholder: "EP"), help: "events endpoint (PUB or forwarder XPUB); several: each broker's, duplicates dropped",
               default: DefaultEventEndpoints.publish, repeatable: true),
        Option("snapshot", .text(placeholder: "EP"), help: "snapshot endpoint to load the current state from",
               default: DefaultEventEndpoints.snapshot, exclusiveGroup: "snapshot"),
        Option("no-snapshot", .none, help: """
            start empty; sources behind a forwarder are still snapshotted at the
            endpoint their heartbeats advertise
            """, exclusiveGroup: "snapshot"),
        Option("course", .text(placeholder: "ID"), help: "only this course"),
        Option("learner", .text(placeholder: "ID"), help: "only this learner"),
        Option("json", .none, help: "one event body (JSON) per line, for scripts", exclusiveGroup: "output"),
        Option("plain", .none, help: "one readable line per event (the default when stdout is not a terminal)", exclusiveGroup: "output"),
        Option("limit", .integer(placeholder: "N", range: 1...Int.max), help: "exit after N events"),
        Option("no-titles", .none, help: "show course ids, without asking the catalog (at the first --broker) for titles"),
    ]

    /// The options `parsed` gives (parsed against ``declarations``), with the `settings`
    /// resolved for the command (the brokers and CURVE certificates).
    /// - Throws: `UsageError` for an empty endpoint or id.
    init(_ parsed: ParsedArguments, settings: Settings) throws(UsageError) {
        func nonEmpty(_ name: String) throws(UsageError) -> String? {
            guard let text = parsed.text(name) else { return nil }
            guard !text.isEmpty else { throw UsageError(option: name, "expected a value, got ''") }
            return text
        }
        let connect = parsed.values("connect")
        if let empty = connect.first(where: \.isEmpty) { throw UsageError(option: "connect", "expected a value, got '\(empty)'") }
        if !connect.isEmpty { eventsEndpoints = connect }
        snapshotEndpoint = parsed.contains("no-snapshot") ? nil : try nonEmpty("snapshot") ?? snapshotEndpoint
        course = try nonEmpty("course")
        learner = try nonEmpty("learner")
        output = parsed.contains("json") ? .json : parsed.contains("plain") ? .lines : nil
        limit = parsed.integer("limit")
        broker = parsed.contains("no-titles") ? nil : settings.brokers.first
        do throws(CredentialsError) {
            security = try CurveCredentials.client(secretCertificate: settings.curveSecretKey, serverCertificate: settings.curveServerKey)?.client ?? .plaintext
        } catch {
            throw UsageError(error.description)
        }
    }
}
