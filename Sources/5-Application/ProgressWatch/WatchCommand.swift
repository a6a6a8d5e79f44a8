#if canImport(Glibc)
import Glibc
#endif
import CommandSyntax
import Configuration
import EventSubscription
import Foundation
import LyceumLogging
import Majordomo
import ZeroMQ

/// `lyceum watch`: a live dashboard of learner progress from events, with snapshot catch-up.
public enum WatchCommand {
    /// `lyceum watch` and its options.
    public static let declaration = Command.withSettings(
        "watch", summary: "live dashboard of progress events (PUB/SUB with snapshot catch-up)",
        discussion: "exit status: 0 after Ctrl-C or --limit; 1 the endpoints fail; 2 bad options",
        keys: SettingKey.taken(by: .watch), options: WatchOptions.declarations
    ) { resolved, sources throws(UsageError) in run(try WatchOptions(sources.commandLine, settings: resolved.settings)) }

    private static func run(_ options: WatchOptions) -> Int32 {
        WatchSignals.install()
        let output = options.output ?? (isatty(STDOUT_FILENO) == 1 ? .dashboard : .lines)
        let logger = Logger(component: "watch")
        do {
            let context = try Context()
            var subscriberOptions = ProgressSubscriber.Options(
                eventsEndpoints: options.eventsEndpoints, snapshotEndpoint: options.snapshotEndpoint, course: options.course)
            subscriberOptions.security = options.security
            subscriberOptions.wakeup = WatchSignals.wakeup
            let subscriber = try ProgressSubscriber(context: context, options: subscriberOptions)
            let titles = output == .dashboard ? courseTitles(options.broker, security: options.security, context: context, logger: logger) : [:]
            return try watch(subscriber, options: options, output: output, titles: titles, logger: logger)
        } catch let error as EventsError {
            logger.error("cannot watch", ["error": error.description])
            return 1
        } catch {
            logger.error("cannot watch", ["error": "\(error)"])
            return 1
        }
    }

    /// The catalog's course titles by id, asked of the catalog service at `broker` once; empty
    /// (the dashboard shows ids) without a broker or when it does not answer within a second.
    private static func courseTitles(_ broker: String?, security: SocketSecurity, context: Context, logger: Logger) -> [String: String] {
        guard let broker else { return [:] }
        var configuration = ClientConfiguration(timeout: .seconds(1), attempts: 1)
        // A `dashboard` key may not call services (protocol/README.md): such a watch shows ids.
        configuration.security = security
        let client = Client(endpoint: broker, configuration: configuration, context: context)
        defer { client.close() }
        do {
            let titles = try CatalogTitles.fetch { request in try client.call("catalog", body: [request]).first ?? [] }
            return Dictionary(titles.map { ($0.id, $0.title) }, uniquingKeysWith: { first, _ in first })
        } catch {
            logger.warning("no course titles from the catalog; showing ids", ["broker": broker, "error": "\(error)"])
            return [:]
        }
    }

    private static func watch(
        _ subscriber: ProgressSubscriber, options: WatchOptions, output: WatchOptions.Output, titles: [String: String], logger: Logger
    ) throws(EventsError) -> Int32 {
        var dashboard = WatchDashboard(endpoint: options.eventsEndpoints.joined(separator: " "), learner: options.learner)
        dashboard.titles = titles
        let terminal = output == .dashboard ? WatchTerminal() : nil
        defer { terminal?.restore() }
        var shown = 0
        var dirty = true
        var pending = ""
        func emit(_ line: String) { pending += line + "\n" }
        func report(_ updates: [ProgressSubscriber.Update]) {
            for update in updates {
                switch update {
                case .event(let event):
                    guard options.learner == nil || event.learner == options.learner else { continue }
                    if let limit = options.limit, shown >= limit { continue }
                    shown += 1
                    dirty = true
                    switch output {
                    case .json: emit(String(decoding: event.body, as: UTF8.self))
                    case .lines: emit(WatchDashboard.line(for: event))
                    case .dashboard: dashboard.add(event)
                    }
                case .synchronized(let source, let sequence, let entries):
                    dirty = true
                    logger.info("loaded snapshot", ["source": source, "seq": "\(sequence)", "entries": "\(entries)"])
                case .gapRepaired(let source, let expected, let seen, let sequence):
                    dirty = true
                    let text = "gap detected: source \(source) expected seq \(expected), saw \(seen); repaired from snapshot at seq \(sequence)"
                    logger.warning("gap repaired from snapshot", ["source": source, "expected": "\(expected)", "seen": "\(seen)", "snapshot_seq": "\(sequence)"])
                    if output == .lines { emit("WARNING " + text) }
                    dashboard.warn(text)
                case .gapUnrepaired(let source, let reason):
                    dirty = true
                    logger.warning("gap not repaired", ["source": source, "reason": reason])
                    if output == .lines { emit("WARNING gap not repaired: source \(source): \(reason)") }
                    dashboard.warn("gap NOT repaired: source \(source): \(reason)")
                case .heartbeat:
                    break
                case .malformed(let detail):
                    logger.warning("ignored a malformed message", ["detail": detail])
                }
            }
        }
        do {
            report(try subscriber.synchronize())
        } catch {
            // A dashboard may start before the service: it waits for events and heartbeats instead.
            logger.warning("no snapshot yet; waiting for events", ["error": error.description])
            dashboard.warn("no snapshot: \(error.description)")
        }
        var lastDraw = ContinuousClock.now - .seconds(1)
        while !WatchSignals.interrupted.load(ordering: .relaxed) {
            if let limit = options.limit, shown >= limit { break }
            report(try subscriber.poll(timeout: .milliseconds(100)))
            if WatchSignals.resized.exchange(false, ordering: .relaxed) { dirty = true }
            if let terminal, dirty, ContinuousClock.now - lastDraw >= .milliseconds(100) {
                let size = terminal.size
                terminal.draw(dashboard.render(Array(subscriber.entries.values), columns: size.columns, rows: size.rows))
                lastDraw = .now
                dirty = false
            }
            if !pending.isEmpty {
                writeStandardOutput(pending)
                pending = ""
            }
        }
        return 0
    }
}
