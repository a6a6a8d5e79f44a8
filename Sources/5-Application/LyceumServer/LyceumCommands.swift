import CommandSyntax
import Configuration
import Security
import ServiceHosting

/// The declarations of the subcommands this module runs (`serve`, `broker`, `worker`, `call`,
/// `status`, `config`, `journal`, `version`) and of the `lyceum` program that holds them with
/// those of other modules. Parsing, errors and `--help` all come from these declarations.
public enum LyceumCommands {
    /// `lyceum` with `subcommands` (in the order `lyceum --help` lists them).
    public static func program(_ subcommands: [Command]) -> Command {
        Command("lyceum", summary: "Lyceum: e-learning services over ZeroMQ (7/MDP)", discussion: """
            Every setting can also come from LYCEUM_<NAME> (e.g. LYCEUM_LOG_LEVEL) or a --config FILE
            (JSON or key = value); precedence: flags > environment > file > defaults. Run
            'lyceum <command> --help' for a command's options, and see docs/operations.md for the
            table of settings and defaults.
            """, subcommands: subcommands)
    }

    /// `lyceum serve`.
    public static let serve = Command.withSettings(
        "serve", summary: "catalog, progress and books in one process, answered by its broker itself",
        keys: SettingKey.taken(by: .serve)
    ) { parsed, sources throws(UsageError) in
        let security = try serverSecurity(parsed.settings, eventEndpoints: [.eventsEndpoint, .snapshotEndpoint])
        return ServerProcesses.serve(parsed.settings, security: security, reloading: sources)
    }

    /// `lyceum broker`.
    public static let broker = Command.withSettings(
        "broker", summary: "only the broker, and the event forwarder workers publish into",
        keys: SettingKey.taken(by: .broker)
    ) { parsed, sources throws(UsageError) in
        let security = try serverSecurity(parsed.settings, eventEndpoints: [.eventsEndpoint, .forwarderEndpoint])
        return ServerProcesses.broker(parsed.settings, security: security, reloading: sources)
    }

    /// `lyceum worker`.
    public static let worker = Command.withSettings(
        "worker", summary: "only workers, registered with every broker given (--broker is required)",
        keys: SettingKey.taken(by: .worker)
    ) { parsed, sources throws(UsageError) in
        // Required, but from any source: the parser sees only the command line.
        guard parsed.settings.origins[.broker] != nil else {
            throw UsageError("--broker is required (or broker in the --config file, or LYCEUM_BROKER)")
        }
        // With CURVE the replication links admit and follow the worker keys of authorized-keys;
        // without, they are plaintext, refused where they would carry records in clear off the host.
        if parsed.settings.replicas > 1, let endpoint = parsed.settings.replicationEndpoint {
            if parsed.settings.curveSecretKey != nil, parsed.settings.authorizedKeys == nil {
                throw UsageError(
                    option: SettingKey.authorizedKeys.rawValue,
                    "required with replicas above 1 and curve-secret-key: the directory holding the other replicas' worker keys")
            }
            if parsed.settings.curveSecretKey == nil, !endpoint.hasPrefix("tcp://127."), !parsed.settings.insecure {
                throw UsageError(
                    option: SettingKey.replicationEndpoint.rawValue, "\(endpoint) is not loopback, and the replication channel is plaintext: pass --insecure to bind it anyway")
            }
        }
        if let unknown = parsed.settings.services.first(where: { ServiceRegistry.standard[$0] == nil }) {
            throw UsageError(option: SettingKey.service.rawValue, "expected one of \(ServiceRegistry.standard.names.joined(separator: ", ")), got '\(unknown)'")
        }
        let security: ProcessSecurity
        do throws(CredentialsError) {
            security = try ProcessSecurity.worker(parsed.settings)
        } catch {
            throw UsageError(error.description)
        }
        if let snapshots = ServerProcesses.chosenSnapshotEndpoint(parsed.settings) {
            do throws(SettingsError) {
                try WorkerSnapshots.check(snapshots, settings: parsed.settings, curve: security.isCurve)
            } catch {
                throw UsageError(error.description)
            }
        }
        return ServerProcesses.worker(parsed.settings, security: security, reloading: sources)
    }

    /// `lyceum call`.
    public static let call = Command.withSettings(
        "call", summary: "send one request, print the reply",
        discussion: "exit status: 0 ok reply; 1 error reply (the service's, or the broker's refusal); 2 bad command line; 3 no reply (timeout, unreachable broker)",
        keys: SettingKey.taken(by: .call),
        positionals: [Positional("SERVICE", help: "the service: catalog, progress, books"), Positional("JSON", help: "the request body")]
    ) { parsed, _ throws(UsageError) in
        CallCommand.run(service: parsed.positionals[0], body: parsed.positionals[1], settings: parsed.settings.client,
                        security: try clientSecurity(parsed.settings))
    }

    /// `lyceum status`.
    public static let status = Command.withSettings(
        "status", summary: "ask the broker's mmi.status: services, workers, queues, journals, uptime, partitions",
        discussion: """
            prints tables on a terminal, and the JSON answer with --json or when standard output is not a
            terminal (a pipe, a file), so scripts read JSON as before
            exit status: 0 answered; 1 not a Lyceum broker, or refused; 2 bad command line; 3 no reply
            """,
        keys: SettingKey.taken(by: .status), options: [StatusCommand.jsonSwitch]
    ) { parsed, sources throws(UsageError) in
        StatusCommand.run(settings: parsed.settings, security: try clientSecurity(parsed.settings),
                          format: .chosen(json: sources.commandLine.contains(StatusCommand.jsonSwitch.name)))
    }

    /// `lyceum config`.
    public static let config = Command.withSettings(
        "config", summary: "print the effective configuration and where each value came from", keys: Set(SettingKey.allCases)
    ) { parsed, sources in
        print(ConfigCommand.render(parsed.settings, file: sources.configFile))
        return 0
    }

    /// `lyceum version`, also `--version`.
    public static let version = Command(
        "version", aliases: ["--version"], summary: "show Lyceum's and libzmq's versions and libzmq's capabilities"
    ) { _ in
        print(VersionCommand.render())
        return 0
    }

    /// The security of `serve` or `broker`, refusing (exit 2) unusable CURVE settings and, in
    /// protected mode, a plaintext bind of an endpoint other hosts can reach: the broker's, and
    /// those of the settings `eventEndpoints` when events are published.
    private static func serverSecurity(_ settings: Settings, eventEndpoints: [SettingKey]) throws(UsageError) -> ProcessSecurity {
        let events = settings.publishesEvents ? eventEndpoints.flatMap { key in settings.values(of: key).map { (key: key, endpoint: $0) } } : []
        let endpoints = settings.endpoints.map { (key: SettingKey.endpoint, endpoint: $0) } + events
        let security: ProcessSecurity
        do throws(CredentialsError) {
            security = try ProcessSecurity.server(settings)
        } catch {
            throw UsageError(error.description)
        }
        do throws(SettingsError) {
            try ProtectedMode.check(endpoints, settings: settings, curve: security.isCurve)
        } catch {
            throw UsageError(error.description)
        }
        return security
    }

    /// The security of a process that connects to a broker, refusing (exit 2) unusable CURVE settings.
    static func clientSecurity(_ settings: Settings) throws(UsageError) -> ProcessSecurity {
        do throws(CredentialsError) {
            return try ProcessSecurity.client(settings)
        } catch {
            throw UsageError(error.description)
        }
    }
}
