import Foundation
import JSON
import LoadTest
import Logging
import LyceumSupport
import ZeroMQ

private let benchUsage = """
    usage: lyceum bench [options]
           lyceum bench plot OUTPUT.svg RESULTS.json...

    Sends Lyceum requests through a Majordomo broker and reports throughput, errors by code and
    latency percentiles (p50, p90, p99, p99.9, max) from a high-dynamic-range histogram.

      --endpoint EP       the broker (default tcp://127.0.0.1:5555)
      --scenario MIX      mix (default), or one of catalog-read, book-read, book-create,
                          book-update, book-delete, progress-watch, quiz-submit, or weighted
                          NAME=WEIGHT,… e.g. book-read=60,catalog-read=40
      --connections M     client connections, one thread each (default 4)
      --in-flight N       closed loop: requests outstanding at all times (default 50);
                          with --rate: the most outstanding (default 10000)
      --rate R            open loop: R requests/s on a fixed schedule; latency counts from each
                          request's intended send time, so server stalls are not hidden
      --duration T        measured time after the warm-up (default 10s; ms, s, m)
      --requests N        measured requests instead of a duration
      --warmup T          not measured (default 2s)
      --seed S            learners, books and requests are generated from S (default 1)
      --learners N        synthetic learners (default 100)
      --books N           books created before the run for reads and updates (default 1000)
      --verify            check every reply's content, not only that it is ok
      --timeout T         a request unanswered this long counts as timed_out (default 5s)
      --label TEXT        the run's name in reports and charts
      --json              print the results as JSON on stdout (the summary goes to stderr)
      --plot FILE.svg     write a latency-percentile chart of this run
      --progress T        seconds between progress lines when stderr is not a terminal (default 5s)

    exit status: 0 no errors; 1 some requests failed or replies were wrong; 2 bad options;
    3 the server could not be prepared (unreachable, missing services)
    """

/// `lyceum bench …`: runs a load test, or draws saved results on one chart.
/// - Returns: the process's exit status, as the usage text documents.
func runBenchCommand(_ arguments: [String]) -> Int32 {
    if arguments.first == "plot" { return runBenchPlot(Array(arguments.dropFirst())) }
    if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
        print(benchUsage)
        return 0
    }
    let options: BenchOptions
    do {
        options = try BenchOptions(arguments)
    } catch {
        FileHandle.standardError.write(Data("lyceum bench: \(error)\n\nrun 'lyceum bench --help' for usage\n".utf8))
        return 2
    }
    let logger = Logger(component: "bench")
    let context: Context
    do {
        context = try Context()
    } catch {
        logger.error("cannot create a ZeroMQ context", ["error": "\(error)"])
        return 3
    }
    let configuration = options.configuration
    logger.info("preparing", ["endpoint": configuration.endpoint, "scenario": configuration.mix.description, "seed": "\(configuration.seed)"])
    let runner: LoadTestRunner
    do {
        let workload = try Workload.prepare(endpoint: configuration.endpoint, mix: configuration.mix, seed: configuration.seed,
                                            learnerCount: configuration.learnerCount, bookCount: configuration.bookCount,
                                            timeout: configuration.timeout, context: context)
        logger.info("prepared", ["courses": "\(workload.courses.count)", "books": "\(workload.books.count)", "learners": "\(workload.learners.count)"])
        runner = try LoadTestRunner(configuration: configuration, workload: workload, context: context)
    } catch {
        logger.error("cannot prepare the run", ["error": "\(error)"])
        return error.code == .invalidOption ? 2 : 3
    }
    let progress = ProgressLine(interval: options.progressInterval)
    let result = runner.run(reportEvery: .milliseconds(200)) { view in
        // main.swift blocks SIGINT and SIGTERM in every thread; this command is their owner.
        if stopSignalArrived() {
            logger.warning("stopping early on a signal: the results cover what was sent")
            runner.stop()
        }
        progress.show(view)
    }
    progress.finish()

    let label = options.label ?? "\(configuration.mix) \(result.loadDescription)"
    let summary = result.text(label: label)
    if options.json {
        FileHandle.standardError.write(Data((summary + "\n").utf8))
        print(String(decoding: result.json(label: label).serialized(), as: UTF8.self))
    } else {
        print(summary)
    }
    if let plot = options.plot {
        let chart = LatencyChart(curves: [PercentileCurve(label: label, histogram: result.statistics.latency)])
        do {
            try Data(chart.svg().utf8).write(to: URL(fileURLWithPath: plot))
        } catch {
            logger.error("cannot write the chart", ["path": plot, "error": "\(error)"])
            return 1
        }
    }
    return result.statistics.errorCount == 0 && result.statistics.completed > 0 ? 0 : 1
}

/// Whether SIGINT or SIGTERM is pending, taking it if so.
private func stopSignalArrived() -> Bool {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    var immediately = timespec(tv_sec: 0, tv_nsec: 0)
    return sigtimedwait(&set, nil, &immediately) > 0
}

/// `lyceum bench plot OUTPUT.svg RESULTS.json…`: the runs' curves on one chart.
private func runBenchPlot(_ arguments: [String]) -> Int32 {
    guard arguments.count >= 2 else {
        FileHandle.standardError.write(Data("lyceum bench plot: expected OUTPUT.svg and at least one RESULTS.json\n".utf8))
        return 2
    }
    var curves: [PercentileCurve] = []
    do {
        for path in arguments.dropFirst() {
            let bytes: [UInt8]
            do {
                bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            } catch {
                throw LoadTestError(code: .file, path: path, detail: "cannot read: \(error.localizedDescription)")
            }
            let json: JSONValue
            do {
                json = try JSONParser().parse(bytes)
            } catch {
                throw LoadTestError(code: .file, path: path, detail: "not JSON: \(error)")
            }
            curves.append(try PercentileCurve(json: json, path: path))
        }
        do {
            try Data(LatencyChart(curves: curves).svg().utf8).write(to: URL(fileURLWithPath: arguments[0]))
        } catch {
            throw LoadTestError(code: .file, path: arguments[0], detail: "cannot write: \(error.localizedDescription)")
        }
    } catch let error as LoadTestError {
        FileHandle.standardError.write(Data("lyceum bench plot: \(error)\n".utf8))
        return error.path == arguments[0] ? 1 : 2
    } catch {
        FileHandle.standardError.write(Data("lyceum bench plot: \(error)\n".utf8))
        return 1
    }
    return 0
}

/// The command line of `lyceum bench`, read into a configuration.
private struct BenchOptions {
    var configuration = LoadTestConfiguration()
    var label: String?
    var json = false
    var plot: String?
    var progressInterval: Duration = .seconds(5)

    init(_ arguments: [String]) throws(LoadTestError) {
        var inFlight: Int?
        var rate: Double?
        var index = 0
        func value(_ option: String) throws(LoadTestError) -> String {
            index += 1
            guard index < arguments.count else { throw LoadTestError(code: .invalidOption, option: option, detail: "needs a value") }
            return arguments[index]
        }
        func integer(_ option: String) throws(LoadTestError) -> Int {
            let text = try value(option)
            guard let number = Int(text) else { throw LoadTestError(code: .invalidOption, option: option, detail: "'\(text)' is not a whole number") }
            return number
        }
        func duration(_ option: String) throws(LoadTestError) -> Duration {
            let text = try value(option)
            guard let parsed = Self.duration(text) else {
                throw LoadTestError(code: .invalidOption, option: option, detail: "'\(text)' is not a duration such as 500ms, 10s or 2m")
            }
            return parsed
        }
        while index < arguments.count {
            let option = arguments[index]
            switch option {
            case "--endpoint": configuration.endpoint = try value(option)
            case "--scenario": configuration.mix = try ScenarioMix(parsing: try value(option))
            case "--connections": configuration.connections = try integer(option)
            case "--in-flight": inFlight = try integer(option)
            case "--rate":
                let text = try value(option)
                guard let parsed = Double(text) else { throw LoadTestError(code: .invalidOption, option: option, detail: "'\(text)' is not a number") }
                rate = parsed
            case "--duration": configuration.stop = .after(try duration(option))
            case "--requests": configuration.stop = .requests(try integer(option))
            case "--warmup": configuration.warmUp = try duration(option)
            case "--seed":
                let text = try value(option)
                guard let seed = UInt64(text) else { throw LoadTestError(code: .invalidOption, option: option, detail: "'\(text)' is not a whole number ≥ 0") }
                configuration.seed = seed
            case "--learners": configuration.learnerCount = try integer(option)
            case "--books": configuration.bookCount = try integer(option)
            case "--verify": configuration.verify = true
            case "--timeout": configuration.timeout = try duration(option)
            case "--label": label = try value(option)
            case "--json": json = true
            case "--plot": plot = try value(option)
            case "--progress": progressInterval = try duration(option)
            default: throw LoadTestError(code: .invalidOption, option: option, detail: "unknown option")
            }
            index += 1
        }
        if let rate {
            configuration.load = .open(rate: rate, maxInFlight: inFlight ?? 10_000)
        } else {
            configuration.load = .closed(inFlight: inFlight ?? 50)
        }
        guard progressInterval >= .milliseconds(100) else {
            throw LoadTestError(code: .invalidOption, option: "--progress", detail: "must be at least 100ms")
        }
        try configuration.validate()
    }

    /// `500ms`, `10s`, `2m`, or a bare number of seconds.
    static func duration(_ text: String) -> Duration? {
        let units: [(suffix: String, nanoseconds: Double)] = [("ms", 1e6), ("s", 1e9), ("m", 60e9)]
        for unit in units where text.hasSuffix(unit.suffix) {
            guard let number = Double(text.dropLast(unit.suffix.count)), number.isFinite, number >= 0, number < 1e7 else { return nil }
            return .nanoseconds(Int64(number * unit.nanoseconds))
        }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds < 1e7 else { return nil }
        return .nanoseconds(Int64(seconds * 1e9))
    }
}

/// The live progress of a run on standard error: one line rewritten every second on a
/// terminal, a plain line every `interval` otherwise (logs, CI).
private final class ProgressLine {
    private let onTerminal = isatty(STDERR_FILENO) == 1
    private let interval: Duration
    private var lastShown: Duration = .zero

    init(interval: Duration) {
        self.interval = onTerminal ? .seconds(1) : interval
    }

    func show(_ progress: LoadTestRunner.Progress) {
        guard progress.elapsed - lastShown >= interval else { return }
        lastShown = progress.elapsed
        let phase = progress.measuring ? "" : " (warm-up)"
        let text = String(format: "%6.1fs", progress.elapsed.seconds) + phase
            + String(format: "  %9.0f req/s  %d replies  %d errors  p99 %.3f ms", progress.recentRate, progress.replies,
                     progress.errors, Double(progress.p99) / 1000)
        FileHandle.standardError.write(Data((onTerminal ? "\r\u{1B}[K" + text : text + "\n").utf8))
    }

    func finish() {
        if onTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
