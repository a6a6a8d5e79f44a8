import Foundation
import JSON
import LyceumTestSupport
@testable import LoadTest
import Testing

/// Load tests against the in-process fake: real sockets, real broker, tiny runs.
@Suite(.serialized) struct LoadTestRunnerTests {
    private func run(_ fake: FakeLyceum, _ configuration: LoadTestConfiguration) throws -> LoadTestResult {
        let workload = try Workload.prepare(endpoint: fake.endpoint, mix: configuration.mix, seed: configuration.seed,
                                            learnerCount: configuration.learnerCount, bookCount: configuration.bookCount,
                                            timeout: configuration.timeout, context: fake.context)
        return try LoadTestRunner(configuration: configuration, workload: workload, context: fake.context).run()
    }

    private func configuration(_ fake: FakeLyceum, load: LoadTestConfiguration.Load, stop: LoadTestConfiguration.Stop,
                               scenario: String = "book-read", verify: Bool = true) throws -> LoadTestConfiguration {
        LoadTestConfiguration(endpoints: [fake.endpoint], mix: try ScenarioMix(parsing: scenario), connections: 2, load: load,
                              stop: stop, warmUp: .milliseconds(200), seed: 3, learnerCount: 5, bookCount: 40, verify: verify)
    }

    @Test func verifiedReadsOfAnHonestServerAreAllCorrect() throws {
        let fake = try FakeLyceum()
        defer { fake.stop() }
        let result = try run(fake, configuration(fake, load: .closed(inFlight: 8), stop: .requests(400),
                                                 scenario: "book-read=3,book-create=1,catalog-read=1"))
        #expect(result.statistics.completed == 400)
        #expect(result.statistics.errors.isEmpty, "\(result.statistics.errors) \(result.statistics.wrongReplies)")
        #expect(result.throughput > 0)
    }

    @Test func verifyCatchesAWrongReply() throws {
        let fake = try FakeLyceum(behaviour: .lying)
        defer { fake.stop() }
        let result = try run(fake, configuration(fake, load: .closed(inFlight: 4), stop: .requests(100)))
        #expect(result.statistics.errors["wrong_reply"] == 100)
        #expect(result.statistics.wrongReplies.first?.contains("book.title") == true)

        let unverified = try run(fake, configuration(fake, load: .closed(inFlight: 4), stop: .requests(100), verify: false))
        #expect(unverified.statistics.errors.isEmpty, "without --verify only ok is checked")
    }

    @Test func openLoopSendsOnSchedule() throws {
        let fake = try FakeLyceum()
        defer { fake.stop() }
        let result = try run(fake, configuration(fake, load: .open(rate: 500, maxInFlight: 100), stop: .after(.seconds(1))))
        // Every intended send time in the measured second is used, whatever the replies do.
        #expect(abs(result.statistics.completed - 500) <= 2, "\(result.statistics.completed) requests")
        // The window ends at the last reply, which cannot come before the last send's time: no
        // upper bound, since how late a loaded machine answers is not this test's business.
        #expect(result.measuredDuration > .milliseconds(900), "\(result.measuredDuration)")
        #expect(result.statistics.errors.isEmpty)
        // How late each send left is measured for every request, so a lagging client shows.
        #expect(result.statistics.sendLag.count == UInt64(result.statistics.completed))
    }

    @Test func openLoopShowsAStallInFull() throws {
        // Request 40 of the run (during the measured part) is held 400 ms by a single session;
        // everything scheduled meanwhile waits behind it and must show that wait.
        let fake = try FakeLyceum(behaviour: .stalling(request: 200, stall: .milliseconds(400)), sessions: 1)
        defer { fake.stop() }
        let open = try run(fake, configuration(fake, load: .open(rate: 200, maxInFlight: 200), stop: .after(.seconds(2)), verify: false))
        let stalled = open.statistics.latency
        #expect(stalled.maximum >= 350_000)
        // About 80 of ~400 requests were scheduled during the stall: well over 10% are slow.
        #expect(stalled.value(atPercentile: 90) >= 50_000, "p90 \(stalled.value(atPercentile: 90)) µs")
    }

    @Test func aServerProcessThatCannotBeReadIsReportedNotHidden() throws {
        // A process that is gone (a child reaped before the run) cannot be read at the end of
        // the warm-up: the result says which and why, and has no server CPU.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let fake = try FakeLyceum()
        defer { fake.stop() }
        var measured = try configuration(fake, load: .closed(inFlight: 4), stop: .requests(100))
        measured.serverProcesses = [getpid(), child.processIdentifier]
        let result = try run(fake, measured)
        #expect(result.serverCPU.isEmpty)
        let failure = try #require(result.serverCPUFailure)
        #expect("\(failure)".contains("/proc/\(child.processIdentifier)"), "\(failure)")
        #expect(result.text(label: "gone").contains("server CPU not measured: "), "\(result.text(label: "gone"))")
    }

    @Test func serverCPUIsReportedPerProcessAndPerRequest() throws {
        // The fake broker runs in this process, so this process is the "server" measured.
        let fake = try FakeLyceum()
        defer { fake.stop() }
        var measured = try configuration(fake, load: .closed(inFlight: 4), stop: .requests(300))
        measured.serverProcesses = [getpid()]
        let result = try run(fake, measured)
        #expect(result.serverCPU.map(\.pid) == [getpid()])
        #expect(result.serverCPU.allSatisfy { $0.time >= .zero })
        let json = try JSONParser().parse(result.json(label: "cpu").serialized())
        guard case .double(let perRequest)? = json["server_cpu"]?["us_per_request"],
              case .double(let total)? = json["server_cpu"]?["processes_us"]?[String(getpid())] else {
            Issue.record("server_cpu.us_per_request and processes_us.PID missing: \(json)")
            return
        }
        #expect(abs(perRequest * 300 - total) < 1)
        #expect(result.text(label: "cpu").contains("server CPU"))
        // The fake broker's threads block on their sockets: they switch context voluntarily.
        guard case .double(let voluntary)? = json["server_cpu"]?["context_switches_per_request"]?["voluntary"],
              case .double(let involuntary)? = json["server_cpu"]?["context_switches_per_request"]?["involuntary"] else {
            Issue.record("server_cpu.context_switches_per_request missing: \(json)")
            return
        }
        #expect(voluntary > 0 && involuntary >= 0)
        #expect(result.text(label: "cpu").contains("context switches/request"))

        let unmeasured = try run(fake, configuration(fake, load: .closed(inFlight: 4), stop: .requests(50)))
        #expect(unmeasured.serverCPU.isEmpty)
        #expect(try JSONParser().parse(unmeasured.json(label: "none").serialized())["server_cpu"] == .null)
    }

    @Test func processCPUReadsUserAndSystemTimeAfterAnyCommandName() throws {
        // A command name may hold spaces and parentheses; fields are counted from its last ')'.
        let line = "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 130 0 0 20 0 3 0 100 1000 200\n"
        #expect(ProcessCPU.parse(stat: line, ticksPerSecond: 100) == .milliseconds(3800))
        #expect(ProcessCPU.parse(stat: "4242 (short) S 1 2", ticksPerSecond: 100) == nil)
        #expect(ProcessCPU.parse(stat: "no parenthesis", ticksPerSecond: 100) == nil)
        #expect(try ProcessCPU.read(pid: getpid()).time > .zero, "this process has run")
        #expect(throws: LoadTestError.self) { try ProcessCPU.read(pid: Int32.max) }
    }

    @Test func processCPUSumsTheContextSwitchesOfEveryThread() throws {
        let status = "Name:\tlyceum\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t56\n"
        #expect(ProcessCPU.parse(switches: status).map { [$0.voluntary, $0.involuntary] } == [1234, 56])
        #expect(ProcessCPU.parse(switches: "Name:\tlyceum\nvoluntary_ctxt_switches:\t1\n") == nil)
        // This process has more than one thread (the test runner's): their sum is at least the main thread's.
        let main = try String(contentsOfFile: "/proc/\(getpid())/status", encoding: .utf8)
        let reading = try ProcessCPU.read(pid: getpid())
        #expect(reading.voluntarySwitches >= ProcessCPU.parse(switches: main)?.voluntary ?? .max)
    }

    /// A thread that blocked many times and exits between two readings takes its count out of
    /// the second one's total; the difference is counted per thread, so it never goes negative.
    @Test func aThreadThatExitsBetweenReadingsTakesNothingOffTheDifference() throws {
        let mayExit = Gate()
        let thread = Thread {
            for _ in 0..<300 { usleep(100) }
            mayExit.wait()
        }
        thread.start()
        // Wait until its 300 sleeps are behind it, so that they are in the first reading.
        while true {
            let ready = try ProcessCPU.read(pid: getpid())
            if ready.switchesByThread.values.contains(where: { $0[0] >= 300 }) { break }
            usleep(10_000)
        }
        let before = try ProcessCPU.read(pid: getpid())
        mayExit.open()
        while thread.isExecuting || !thread.isFinished { usleep(1_000) }
        usleep(50_000)
        let after = try ProcessCPU.read(pid: getpid())
        let made = after.used(since: before)
        #expect(made.voluntarySwitches >= 0 && made.involuntarySwitches >= 0)
        #expect(after.voluntarySwitches - before.voluntarySwitches < made.voluntarySwitches,
                "the totals' difference lost the exited thread's 300 switches; the per-thread one did not")
    }

    @Test func jsonResultsParseAndKeepTheCurve() throws {
        let fake = try FakeLyceum()
        defer { fake.stop() }
        let result = try run(fake, configuration(fake, load: .closed(inFlight: 4), stop: .requests(200)))
        let json = try JSONParser().parse(result.json(label: "fake reads").serialized())
        #expect(json["requests"] == .integer(200))
        #expect(json["error_count"] == .integer(0))
        #expect(json["load"]?["mode"] == "closed")
        guard case .integer(let p99)? = json["latency_us"]?["p99"], case .integer(let p50)? = json["latency_us"]?["p50"] else {
            Issue.record("latency_us.p50 and .p99 missing: \(json)")
            return
        }
        #expect(p50 > 0 && p50 <= p99)
        let curve = try PercentileCurve(json: json, path: "test")
        #expect(curve == PercentileCurve(label: "fake reads", histogram: result.statistics.latency))
        let svg = LatencyChart(curves: [curve, curve]).svg()
        #expect(svg.hasPrefix("<svg") && svg.contains("fake reads") && svg.contains("99.9%"))
    }
}
