import Foundation
import LyceumTestSupport
import Testing

/// `lyceum serve` (durability `always`) whose every fdatasync returns 50 ms late (strace's
/// `inject=fdatasync:delay_exit=50000`, filtered by seccomp so that other calls run at full
/// speed): eight writers' creates are all acknowledged, later than on the same disk without the
/// delay, none times out (each call waits up to a minute, a hang limit) and none is lost across
/// a restart. The rates and the syncs are printed, never asserted.
@Suite(.serialized) struct SlowDiskTests {
    static let writers = 8
    static let creates = 25

    @Test func everySyncFiftyMillisecondsSlowerSlowsAcknowledgementsAndLosesNothing() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let metricsPort = try freeLoopbackPorts(count: 1)
        let serve = try FaultyServe(dataDirectory: data.path, arguments: ["--durability", "always", "--metrics-port", String(metricsPort)])
        let normal = try Self.write(to: serve, phase: "normal")
        let normalSyncs = try syncs(metricsPort)

        #expect(serve.process.signal(SIGTERM) == 0)
        try serve.start(launcher: [
            "/usr/bin/strace", "-f", "--seccomp-bpf", "-qq", "-o", "/dev/null", "-e", "trace=fdatasync", "-e", "inject=fdatasync:delay_exit=50000", "--",
        ])
        let slow = try Self.write(to: serve, phase: "slow")
        let slowSyncs = try syncs(metricsPort)
        // strace runs serve as its child (and exits with its status): the signal goes to serve.
        let stracePID = serve.process.processIdentifier
        let children = try String(contentsOfFile: "/proc/\(stracePID)/task/\(stracePID)/children", encoding: .utf8)
        let servePID = try #require(children.split(separator: " ").first.flatMap { pid_t($0) }, "strace has no child")
        kill(servePID, SIGTERM)
        #expect(serve.process.waitForExit() == 0)
        print("""
            normal disk: \(normal.acknowledged.count) creates in \(normal.took) (\(normalSyncs) syncs); \
            every fdatasync 50 ms slower: \(slow.acknowledged.count) creates in \(slow.took) (\(slowSyncs) syncs, \
            \(String(format: "%.1f", Double(slow.acknowledged.count) / Double(max(slowSyncs, 1)))) creates a sync)
            """)
        #expect(normal.failures.isEmpty && slow.failures.isEmpty, "creates failed or timed out: \(normal.failures + slow.failures)")
        #expect(slow.acknowledged.count == Self.writers * Self.creates)

        try serve.start()
        let expected = normal.acknowledged.union(slow.acknowledged)
        var found = Set<String>()
        for writer in 0..<Self.writers { found.formUnion(try serve.bookIDs(of: "slow-\(writer)")) }
        #expect(expected.subtracting(found).isEmpty, "\(expected.subtracting(found).count) acknowledged books lost")
        #expect(found == expected)
    }

    /// Eight writers each create `creates` books one after another (a minute's wait for each).
    private static func write(to serve: FaultyServe, phase: String) throws -> (acknowledged: Set<String>, failures: [String], took: Duration) {
        let started = ContinuousClock.now
        let results = (0..<writers).map { writer in
            ThreadResult("writer-\(writer)") { () -> (ids: [String], failures: [String]) in
                var ids: [String] = []
                var failures: [String] = []
                for number in 0..<creates {
                    let request = createBook(learner: "slow-\(writer)", title: "\(phase) \(number)", requestID: "\(phase)-\(writer)-\(number)")
                    do {
                        let reply = try serve.call("books", request, timeout: .seconds(60))
                        if let id = reply.bookID { ids.append(id) } else { failures.append("\(reply)") }
                    } catch {
                        failures.append("\(error)")
                    }
                }
                return (ids, failures)
            }
        }
        var acknowledged = Set<String>()
        var failures: [String] = []
        for result in results {
            let value = try result.value()
            acknowledged.formUnion(value.ids)
            failures += value.failures
        }
        return (acknowledged, failures, ContinuousClock.now - started)
    }
}

/// `lyceum_journal_syncs_total` of the books journal, from the metrics port.
private func syncs(_ port: Int) throws -> Int {
    let scrape = try ChildProcess.run("/usr/bin/curl", ["-sS", "http://127.0.0.1:\(port)/metrics"])
    let line = scrape.standardOutput.split(separator: "\n").first { $0.hasPrefix("lyceum_journal_syncs_total{") && $0.contains(#"service="books""#) }
    return Int(line?.split(separator: " ").last ?? "") ?? 0
}
