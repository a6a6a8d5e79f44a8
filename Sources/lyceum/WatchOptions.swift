import Events

/// The flags of `lyceum watch`.
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

    var eventsEndpoint = EventEndpoints.publish
    var snapshotEndpoint: String? = EventEndpoints.snapshot
    var course: String?
    var learner: String?
    var output: Output?
    var limit: Int?

    static let usage = """
        usage: lyceum watch [--connect EP] [--snapshot EP | --no-snapshot] [--course ID] [--learner ID]
                            [--json | --plain] [--limit N]

          --connect EP     events endpoint (PUB or forwarder XPUB), default \(EventEndpoints.publish)
          --snapshot EP    snapshot endpoint to load the current state from, default \(EventEndpoints.snapshot)
          --no-snapshot    start empty; sources behind a forwarder are still snapshotted at the
                           endpoint their heartbeats advertise
          --course ID      only this course
          --learner ID     only this learner
          --json           one event body (JSON) per line, for scripts
          --plain          one readable line per event (the default when stdout is not a terminal)
          --limit N        exit after N events
        """

    /// Parses `arguments`, or returns the message to print before the usage.
    static func parse(_ arguments: [String]) -> Result<WatchOptions, WatchUsageError> {
        var options = WatchOptions()
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            func value() -> String? {
                guard let next = rest.popFirst(), !next.isEmpty, !next.hasPrefix("--") else { return nil }
                return next
            }
            switch flag {
            case "--connect":
                guard let endpoint = value() else { return .failure(.init("--connect needs an endpoint")) }
                options.eventsEndpoint = endpoint
            case "--snapshot":
                guard let endpoint = value() else { return .failure(.init("--snapshot needs an endpoint")) }
                options.snapshotEndpoint = endpoint
            case "--no-snapshot": options.snapshotEndpoint = nil
            case "--course":
                guard let course = value() else { return .failure(.init("--course needs a course id")) }
                options.course = course
            case "--learner":
                guard let learner = value() else { return .failure(.init("--learner needs a learner id")) }
                options.learner = learner
            case "--json", "--plain":
                let chosen: Output = flag == "--json" ? .json : .lines
                guard options.output == nil || options.output == chosen else { return .failure(.init("--json and --plain exclude each other")) }
                options.output = chosen
            case "--limit":
                guard let text = value(), let limit = Int(text), limit > 0 else { return .failure(.init("--limit needs a positive number")) }
                options.limit = limit
            case "--help", "-h": return .failure(.init(nil))
            default: return .failure(.init("unknown option '\(flag)'"))
            }
        }
        return .success(options)
    }
}

/// A bad `lyceum watch` command line; `message` is `nil` when help was asked for.
struct WatchUsageError: Error {
    let message: String?
    init(_ message: String?) { self.message = message }
}
