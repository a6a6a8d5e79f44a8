import CommandSyntax
import Configuration
import Foundation
import JSON
import LyceumLogging
import Security
import ZeroMQ

/// `lyceum bench`: runs a load test through a Majordomo broker, or (`bench plot`) draws saved
/// results on one chart.
public enum BenchCommand {
    /// Exit status when the server could not be prepared (unreachable, missing services).
    static let setupFailedStatus: Int32 = 3

    /// `lyceum bench` and `lyceum bench plot`.
    public static let declaration: Command = {
        let defaults = LoadTestConfiguration()
        return Command.withSettings(
            "bench", summary: "load-test a broker: closed loop or fixed rate, verified replies, --json, --plot",
            discussion: """
                Sends Lyceum requests through a Majordomo broker and reports throughput, errors by code and
                latency percentiles (p50, p90, p99, p99.9, max) from a high-dynamic-range histogram.

                exit status: 0 no errors; 1 some requests failed or replies were wrong; 2 bad options;
                3 the server could not be prepared (unreachable, missing services)
                """,
            keys: SettingKey.taken(by: .bench),
            options: [
                Option("endpoint", .text(placeholder: "EP"), help: "an alias of --broker, which it replaces when given", repeatable: true),
                Option("scenario", .text(placeholder: "MIX"), help: """
                    mix, or one of \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")),
                    or weighted NAME=WEIGHT,… e.g. book-read=60,catalog-read=40
                    """, default: defaults.mix.description),
                Option("connections", .integer(placeholder: "M", range: 1...1024), help: "client connections, one thread each",
                       default: String(defaults.connections)),
                Option("in-flight", .integer(placeholder: "N", range: 1...100_000), help: """
                    closed loop: requests outstanding at all times (default \(closedInFlight));
                    with --rate: the most outstanding (default \(openInFlight))
                    """),
                Option("rate", .number(placeholder: "R"), help: """
                    open loop: R requests/s on a fixed schedule; latency counts from each
                    request's intended send time, so server stalls are not hidden
                    """),
                Option("duration", .duration(placeholder: "T"), help: "measured time after the warm-up (ms, s, m)",
                       default: stopText(defaults.stop), exclusiveGroup: "stop"),
                Option("requests", .integer(placeholder: "N", range: 1...Int.max), help: "measured requests instead of a duration",
                       exclusiveGroup: "stop"),
                Option("warmup", .duration(placeholder: "T"), help: "not measured", default: OptionValue.text(of: defaults.warmUp)),
                Option("seed", .unsignedInteger(placeholder: "S"), help: "learners, books and requests are generated from S",
                       default: String(defaults.seed)),
                Option("learners", .integer(placeholder: "N", range: 1...10_000_000), help: "synthetic learners",
                       default: String(defaults.learnerCount)),
                Option("books", .integer(placeholder: "N", range: 0...10_000_000), help: "books created before the run for reads and updates",
                       default: String(defaults.bookCount)),
                Option("list-sort", .text(placeholder: "KEY"), help: "book-list: \(BookListing.sorts.joined(separator: ", "))",
                       default: defaults.listing.sort),
                Option("list-limit", .integer(placeholder: "N", range: 1...100), help: "book-list: books a page",
                       default: String(defaults.listing.limit)),
                Option("list-page", .integer(placeholder: "P", range: 1...1_000_000), help: """
                    book-list: list page P every time (1 the first; the cursor to it is followed
                    once in setup), instead of every page in turn, following next_cursor and
                    starting over after the last; connection i lists learner i mod --learners
                    """),
                Option("verify", .none, help: "check every reply's content, not only that it is ok"),
                Option("timeout", .duration(placeholder: "T"), help: "a request unanswered this long counts as timed_out",
                       default: OptionValue.text(of: defaults.timeout)),
                Option("server-pid", .integer(placeholder: "PID", range: 1...Int(Int32.max)), help: """
                    a server process (broker, worker) whose CPU time over the measured part is
                    reported, in all and per request, apart from this client's
                    """, repeatable: true),
                Option("label", .text(placeholder: "TEXT"), help: "the run's name in reports and charts"),
                Option("json", .none, help: "print the results as JSON on stdout (the summary goes to stderr)"),
                Option("plot", .text(placeholder: "FILE.svg"), help: "write a latency-percentile chart of this run"),
                Option("progress", .duration(placeholder: "T"), help: "time between progress lines when stderr is not a terminal (at least 100ms)",
                       default: OptionValue.text(of: ProgressLine.defaultInterval)),
            ],
            subcommands: [plotDeclaration],
            run: run)
    }()

    /// The default end of a run as `--help` shows it.
    private static func stopText(_ stop: LoadTestConfiguration.Stop) -> String {
        switch stop {
        case .after(let duration): OptionValue.text(of: duration)
        case .requests(let count): "\(count) requests"
        }
    }

    /// Requests outstanding in a closed loop when `--in-flight` is not given.
    private static let closedInFlight = 50
    /// The most requests outstanding in an open loop when `--in-flight` is not given.
    private static let openInFlight = 10_000

    /// The configuration `parsed` asks for, checked.
    /// - Throws: `UsageError` naming the option whose value cannot make a meaningful run.
    static func configuration(_ parsed: ParsedArguments, settings: Settings) throws(UsageError) -> LoadTestConfiguration {
        var configuration = LoadTestConfiguration()
        do throws(LoadTestError) {
            // `--endpoint`, the name bench had before it took `--broker` as every client command does.
            let endpoints = parsed.values("endpoint")
            configuration.endpoints = endpoints.isEmpty ? settings.brokers : endpoints
            if let mix = parsed.text("scenario") { configuration.mix = try ScenarioMix(parsing: mix) }
            if let connections = parsed.integer("connections") { configuration.connections = connections }
            if let duration = parsed.duration("duration") { configuration.stop = .after(duration) }
            if let requests = parsed.integer("requests") { configuration.stop = .requests(requests) }
            if let warmUp = parsed.duration("warmup") { configuration.warmUp = warmUp }
            if let seed = parsed.unsignedInteger("seed") { configuration.seed = seed }
            if let learners = parsed.integer("learners") { configuration.learnerCount = learners }
            if let books = parsed.integer("books") { configuration.bookCount = books }
            if let timeout = parsed.duration("timeout") { configuration.timeout = timeout }
            for option in ["list-sort", "list-limit", "list-page"] where parsed.contains(option) && !configuration.mix.includes(any: [.bookList]) {
                throw LoadTestError(code: .invalidOption, option: "--\(option)", detail: "applies only to the book-list scenario, which --scenario does not name")
            }
            if let sort = parsed.text("list-sort") { configuration.listing.sort = sort }
            if let limit = parsed.integer("list-limit") { configuration.listing.limit = limit }
            configuration.listing.page = parsed.integer("list-page")
            configuration.verify = parsed.contains("verify")
            configuration.serverProcesses = parsed.values("server-pid").compactMap { Int32($0) }
            let inFlight = parsed.integer("in-flight")
            configuration.load = parsed.number("rate").map { .open(rate: $0, maxInFlight: inFlight ?? openInFlight) }
                ?? .closed(inFlight: inFlight ?? closedInFlight)
            try configuration.validate()
        } catch {
            throw usageError(error)
        }
        do throws(CredentialsError) {
            configuration.security = try CurveCredentials.client(
                secretCertificate: settings.curveSecretKey, serverCertificate: settings.curveServerKey)?.client ?? .plaintext
        } catch {
            throw UsageError(error.description)
        }
        return configuration
    }

    private static func run(_ resolved: CommandArguments, _ sources: ConfigurationSources) throws(UsageError) -> Int32 {
        let parsed = sources.commandLine
        let configuration = try configuration(parsed, settings: resolved.settings)
        let progressInterval = parsed.duration("progress") ?? ProgressLine.defaultInterval
        guard progressInterval >= .milliseconds(100) else { throw UsageError(option: "progress", "must be at least 100ms") }
        let logger = Logger(component: "bench")
        let context: Context
        do {
            context = try Context()
        } catch {
            logger.error("cannot create a ZeroMQ context", ["error": "\(error)"])
            return setupFailedStatus
        }
        logger.info("preparing", ["endpoints": configuration.endpoints.joined(separator: ","), "scenario": configuration.mix.description, "seed": "\(configuration.seed)"])
        let runner: LoadTestRunner
        do throws(LoadTestError) {
            for pid in configuration.serverProcesses { _ = try ProcessCPU.read(pid: pid) }
        } catch {
            throw UsageError(option: "server-pid", "\(error)")
        }
        do throws(LoadTestError) {
            let workload = try Workload.prepare(endpoint: configuration.endpoints[0], mix: configuration.mix, seed: configuration.seed,
                                                learnerCount: configuration.learnerCount, bookCount: configuration.bookCount,
                                                listing: configuration.listing, timeout: configuration.timeout,
                                                security: configuration.security, context: context)
            logger.info("prepared", ["courses": "\(workload.courses.count)", "books": "\(workload.books.count)", "learners": "\(workload.learners.count)"])
            runner = try LoadTestRunner(configuration: configuration, workload: workload, context: context)
        } catch {
            logger.error("cannot prepare the run", ["error": "\(error)"])
            guard error.code != .invalidOption else { throw usageError(error) }
            return setupFailedStatus
        }
        let progress = ProgressLine(interval: progressInterval)
        let result = runner.run(reportEvery: .milliseconds(200)) { view in
            // main.swift blocks SIGINT and SIGTERM in every thread; this command is their owner.
            if stopSignalArrived() {
                logger.warning("stopping early on a signal: the results cover what was sent")
                runner.stop()
            }
            progress.show(view)
        }
        progress.finish()

        let label = parsed.text("label") ?? "\(configuration.mix) \(result.loadDescription)"
        let summary = result.text(label: label)
        if parsed.contains("json") {
            FileHandle.standardError.write(Data((summary + "\n").utf8))
            print(String(decoding: result.json(label: label).serialized(), as: UTF8.self))
        } else {
            print(summary)
        }
        if let plot = parsed.text("plot") {
            let chart = LatencyChart(curves: [PercentileCurve(label: label, histogram: result.statistics.latency)])
            do {
                try Data(chart.svg().utf8).write(to: URL(fileURLWithPath: plot))
            } catch {
                logger.error("cannot write the chart", ["path": plot, "error": "\(error)"])
                return 1
            }
        }
        if let failure = result.serverCPUFailure {
            logger.error("the server's CPU could not be measured", ["error": "\(failure)"])
            return 1
        }
        return result.statistics.errorCount == 0 && result.statistics.completed > 0 ? 0 : 1
    }

    /// A refused option as the command line reports it: `--rate: invalid-option: must be …`.
    private static func usageError(_ error: LoadTestError) -> UsageError {
        UsageError(option: error.option.map { String($0.drop { $0 == "-" }) }, "\(error.code.rawValue): \(error.detail)")
    }

    /// Whether SIGINT or SIGTERM is pending, taking it if so.
    private static func stopSignalArrived() -> Bool {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        var immediately = timespec(tv_sec: 0, tv_nsec: 0)
        return sigtimedwait(&set, nil, &immediately) > 0
    }

    /// `lyceum bench plot OUTPUT.svg RESULTS.json…`.
    private static let plotDeclaration = Command(
        "plot", summary: "draw the latency curves of saved runs (bench --json output) on one chart",
        discussion: "exit status: 0 chart written; 1 the chart cannot be written; 2 bad arguments or results",
        positionals: [
            Positional("OUTPUT.svg", help: "the chart to write"),
            Positional("RESULTS.json", help: "a run's results, as bench --json prints them", count: .oneOrMore),
        ], run: plot)

    /// The runs' curves on one chart.
    private static func plot(_ parsed: ParsedArguments) throws(UsageError) -> Int32 {
        let output = parsed.positionals[0]
        do throws(LoadTestError) {
            let curves = try parsed.positionals.dropFirst().map { path throws(LoadTestError) in try PercentileCurve(file: path) }
            do {
                try Data(LatencyChart(curves: curves).svg().utf8).write(to: URL(fileURLWithPath: output))
            } catch {
                FileHandle.standardError.write(Data("lyceum bench plot: \(LoadTestError(code: .file, path: output, detail: "cannot write: \(error.localizedDescription)"))\n".utf8))
                return 1
            }
        } catch {
            throw UsageError("\(error)")
        }
        return 0
    }
}
