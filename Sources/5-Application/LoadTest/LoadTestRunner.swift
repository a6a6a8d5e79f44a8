import Foundation
import LyceumSupport
import Majordomo
import Synchronization
import ZeroMQ

/// Runs a load test: one thread and one connection per ``LoadTestConfiguration/connections``,
/// paced closed- or open-loop, warm-up excluded, figures merged at the end.
public final class LoadTestRunner: Sendable {
    /// A view of a run in progress, for a progress line.
    public struct Progress: Sendable {
        /// Time since the run started, warm-up included.
        public let elapsed: Duration
        /// Whether the warm-up is over.
        public let measuring: Bool
        /// Replies so far, warm-up included.
        public let replies: Int
        /// Replies per second since the previous view.
        public let recentRate: Double
        /// Measured failures so far.
        public let errors: Int
        /// The 99th percentile of measured latencies so far, in microseconds.
        public let p99: UInt64
    }

    /// The run's definition.
    public let configuration: LoadTestConfiguration
    /// What the server holds.
    public let workload: Workload
    private let context: Context
    private let connections: [PublishedStatistics]
    private let stopRequested = Atomic<Bool>(false)
    /// Makes this run's `request_id`s its own, so that a run never replays an earlier one's writes.
    private let runNonce = String(UInt64.random(in: .min ... .max), radix: 36)
    /// How often one request may be resent through another broker before it counts as failed.
    private var resendLimit: Int { 2 * configuration.endpoints.count }

    /// A runner for `configuration` against a server prepared as `workload` says.
    /// - Throws: ``LoadTestError/Code/invalidOption`` when the configuration is out of range or
    ///   the workload cannot serve a scenario of the mix.
    public init(configuration: LoadTestConfiguration, workload: Workload, context: Context) throws(LoadTestError) {
        try configuration.validate()
        if let (scenario, reason) = RequestPlanner.unservable(configuration.mix, by: workload).first {
            throw LoadTestError(code: .invalidOption, option: "--scenario", detail: "\(scenario.rawValue) cannot run: \(reason)")
        }
        self.configuration = configuration
        self.workload = workload
        self.context = context
        connections = (0..<configuration.connections).map { _ in PublishedStatistics() }
    }

    /// Runs to the end, calling `report` with a view of the run every `interval`.
    /// - Returns: the merged figures of every connection.
    public func run(reportEvery interval: Duration = .seconds(1), report: (Progress) -> Void = { _ in }) -> LoadTestResult {
        let clock = ContinuousClock()
        let start = clock.now + .milliseconds(20)
        // How many connections' threads have finished.
        let finished = Monitor(0)
        for index in connections.indices {
            let thread = Thread { [self] in
                runConnection(index, start: start)
                finished.update { $0 += 1 }
            }
            thread.name = "bench-\(index)"
            thread.start()
        }
        let serverCPU = ServerCPUSampler(processes: configuration.serverProcesses, from: start + configuration.warmUp)
        var previousReplies = 0
        var previousTime = clock.now
        while !finished.wait(until: { $0 == connections.count }, deadline: clock.now + interval) {
            let now = clock.now
            let merged = mergedStatistics()
            let seconds = (now - previousTime).seconds
            report(Progress(elapsed: now - start, measuring: now >= start + configuration.warmUp,
                            replies: merged.repliesIncludingWarmUp,
                            recentRate: seconds > 0 ? Double(merged.repliesIncludingWarmUp - previousReplies) / seconds : 0,
                            errors: merged.errorCount, p99: merged.latency.value(atPercentile: 99)))
            previousReplies = merged.repliesIncludingWarmUp
            previousTime = now
        }
        let merged = mergedStatistics()
        let measuredFrom = start + configuration.warmUp
        let window = (merged.lastMeasuredReply ?? measuredFrom) - measuredFrom
        let (measuredCPU, failure): ([ProcessCPU], LoadTestError?) = switch serverCPU.finish() {
        case .success(let measured): (measured, nil)
        case .failure(let error): ([], error)
        }
        return LoadTestResult(configuration: configuration, statistics: merged, measuredDuration: window,
                              serverCPU: measuredCPU, serverCPUFailure: failure)
    }

    /// Ends the run early, from any thread: no request is sent after this, replies to those
    /// in flight are still awaited and counted.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
    }

    private func mergedStatistics() -> RunStatistics {
        var merged = RunStatistics()
        for connection in connections { merged.merge(connection.latest.withLock { $0 }) }
        return merged
    }

    private struct InFlight {
        let request: PlannedRequest
        /// Intended (open loop) or actual (closed loop) send time.
        let since: ContinuousClock.Instant
        let measured: Bool
        /// Times it was sent again through another broker.
        var resends = 0
    }

    /// One connection's whole run on the calling thread.
    private func runConnection(_ index: Int, start: ContinuousClock.Instant) {
        let clock = ContinuousClock()
        let count = configuration.connections
        let capacity: Int
        var interval: Duration?
        var nextIntended = start
        switch configuration.load {
        case .closed(let inFlight):
            capacity = LoadTestConfiguration.share(of: inFlight, connection: index, of: count)
        case .open(let rate, let maxInFlight):
            capacity = LoadTestConfiguration.share(of: maxInFlight, connection: index, of: count)
            let step = Duration.nanoseconds(Int64(1e9 * Double(count) / rate))
            interval = step
            // Connections take turns so that together they send evenly spaced requests.
            nextIntended = start + step * index / count
        }
        let measuredFrom = start + configuration.warmUp
        var sendUntil: ContinuousClock.Instant?
        var quota = Int.max
        switch configuration.stop {
        case .after(let duration): sendUntil = measuredFrom + duration
        case .requests(let total): quota = LoadTestConfiguration.share(of: total, connection: index, of: count)
        }
        // With several brokers, writes carry request ids, so that a resend through another
        // broker is applied once; with one, requests are as they always were (never resent).
        let endpoints = configuration.endpoints
        var planner = RequestPlanner(workload: workload, mix: configuration.mix, verify: configuration.verify, connection: index,
                                     requestIDPrefix: endpoints.count > 1 ? "bench-\(runNonce)-\(index)" : nil,
                                     listing: configuration.listing)
        var clientConfiguration = ClientConfiguration(timeout: configuration.timeout, attempts: 1)
        clientConfiguration.security = configuration.security
        var endpointIndex = index % endpoints.count
        var client = AsyncClient(endpoint: endpoints[endpointIndex], capacity: capacity, configuration: clientConfiguration, context: context)
        defer { client.close() }
        var pending: [AsyncClient.RequestID: InFlight] = [:]
        var measuredSent = 0
        var local = RunStatistics()
        var lastPublished = clock.now
        let stats = connections[index]

        func publish(force: Bool = false) {
            let now = clock.now
            guard force || now - lastPublished >= .milliseconds(50) else { return }
            stats.latest.withLock { $0 = local }
            lastPublished = now
        }
        func sendingIsOver(_ now: ContinuousClock.Instant) -> Bool {
            if stopRequested.load(ordering: .relaxed) { return true }
            if let sendUntil, now >= sendUntil { return true }
            return measuredSent >= quota
        }
        /// Sends one request stamped `since`; a failure to send is counted as its outcome.
        func send(since: ContinuousClock.Instant, sentAt now: ContinuousClock.Instant) {
            let request = planner.next()
            let measured = since >= measuredFrom
            if measured {
                measuredSent += 1
                if interval != nil { local.sendLag.record(now - since) }
            }
            local.sent += 1
            do {
                let id = try client.send(request.scenario.service, body: request.body)
                pending[id] = InFlight(request: request, since: since, measured: measured)
            } catch {
                local.count(.error(code: error.code.rawValue), latency: measured ? clock.now - since : nil)
            }
        }

        /// Sends `request` again on the current client; a failure to send is counted as its outcome.
        func resend(_ request: InFlight) {
            do {
                let id = try client.send(request.request.scenario.service, body: request.request.body)
                pending[id] = request
            } catch {
                local.count(.error(code: error.code.rawValue), latency: request.measured ? clock.now - request.since : nil)
            }
        }
        /// Moves to the next broker and resends `failed` and every request still in flight on
        /// the old connection (which closes with it), keeping their send times.
        func failOver(resending failed: InFlight) {
            client.close()
            endpointIndex = (endpointIndex + 1) % endpoints.count
            client = AsyncClient(endpoint: endpoints[endpointIndex], capacity: capacity, configuration: clientConfiguration, context: context)
            local.failovers += 1
            let inFlight = [failed] + pending.values
            pending.removeAll()
            for var request in inFlight {
                request.resends += 1
                resend(request)
            }
        }

        while clock.now < start {
            Thread.sleep(forTimeInterval: (start - clock.now).seconds)
        }
        while true {
            var now = clock.now
            if let interval {
                while !sendingIsOver(nextIntended), nextIntended <= now, pending.count < capacity {
                    send(since: nextIntended, sentAt: now)
                    nextIntended += interval
                }
            } else {
                while !sendingIsOver(now), pending.count < capacity {
                    send(since: now, sentAt: now)
                    now = clock.now
                }
            }
            now = clock.now
            let stopped = interval == nil ? sendingIsOver(now) : sendingIsOver(nextIntended)
            if stopped && pending.isEmpty { break }
            // Wait for a reply, but no later than the next scheduled send. zmq_poll counts whole
            // milliseconds, so shorter waits poll without blocking and sleep briefly instead.
            var wait: Duration = .milliseconds(100)
            if interval != nil, !stopped, pending.count < capacity { wait = max(.zero, nextIntended - now) }
            let completion: AsyncClient.Completion?
            do {
                completion = try client.receive(timeout: wait >= .milliseconds(1) ? wait : .zero)
            } catch {
                local.errors[error.code.rawValue, default: 0] += pending.count
                break
            }
            guard let completion else {
                if pending.isEmpty, wait > .zero {
                    // Nothing in flight (an open loop ahead of its schedule): receive returns at
                    // once, so sleep until the next send rather than spin on it.
                    Thread.sleep(forTimeInterval: wait.seconds)
                } else if wait > .zero, wait < .milliseconds(1) {
                    Thread.sleep(forTimeInterval: min(0.00005, wait.seconds))
                }
                publish()
                continue
            }
            guard let request = pending.removeValue(forKey: completion.id) else { continue }
            let outcome: ReplyOutcome
            switch completion.result {
            case .success(let body): outcome = planner.judge(body, for: request.request)
            case .failure(let error) where endpoints.count > 1 && error.code.callsForAnotherBroker && request.resends < resendLimit:
                failOver(resending: request)
                continue
            case .failure(let error): outcome = .error(code: error.code.rawValue)
            }
            let replyTime = clock.now
            local.count(outcome, latency: request.measured ? replyTime - request.since : nil)
            if request.measured { local.lastMeasuredReply = replyTime }
            publish()
        }
        publish(force: true)
    }
}

/// Reads the server processes' CPU time when the warm-up ends, on a thread of its own so that
/// the reading is not late by a progress interval, and again when the run ends.
private final class ServerCPUSampler: Sendable {
    private let processes: [Int32]
    private let atStart = AwaitedResult<[ProcessCPU], LoadTestError>()

    init(processes: [Int32], from measuredFrom: ContinuousClock.Instant) {
        self.processes = processes
        guard !processes.isEmpty else { return }
        let thread = Thread { [self] in
            let clock = ContinuousClock()
            while clock.now < measuredFrom {
                Thread.sleep(forTimeInterval: min(0.1, (measuredFrom - clock.now).seconds))
            }
            atStart.settle(Self.read(processes))
        }
        thread.name = "bench-server-cpu"
        thread.start()
    }

    /// Each process's CPU time from the end of the warm-up until now; empty when no process
    /// was named or the run was stopped before its warm-up ended (nothing was measured).
    /// - Returns: the failure naming the process and file when one could not be read at either
    ///   end (it exited, or its threads could not be listed).
    func finish() -> Result<[ProcessCPU], LoadTestError> {
        guard !processes.isEmpty, let atStart = atStart.wait(timeout: .seconds(1)) else { return .success([]) }
        return atStart.flatMap { before in Self.read(processes).map { after in zip(after, before).map { $0.used(since: $1) } } }
    }

    private static func read(_ processes: [Int32]) -> Result<[ProcessCPU], LoadTestError> {
        Result { () throws(LoadTestError) in try processes.map { pid throws(LoadTestError) in try ProcessCPU.read(pid: pid) } }
    }
}

/// One connection's figures as last published by its thread, for the progress view and the end.
private final class PublishedStatistics: Sendable {
    let latest = Mutex(RunStatistics())
}
