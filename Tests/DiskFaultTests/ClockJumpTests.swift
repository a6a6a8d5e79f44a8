import Foundation
import LyceumTestSupport
import Testing

/// Three replicas whose wall clocks jump an hour while they serve: libfaketime, preloaded into
/// each worker, reads the offset from a file of the test's (`FAKETIME_TIMESTAMP_FILE`, read
/// again every second), and leaves the monotonic clock alone, as a real jump of the wall clock
/// does. Lyceum measures every interval on the monotonic clock (leases, keep-alives, request
/// time-outs, syncs): the jump changes no leadership, writes go on, a fail-over afterwards works,
/// and nothing acknowledged is lost or applied twice.
@Suite(.serialized) struct ClockJumpTests {
    static let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    static let available = FileManager.default.fileExists(atPath: library)

    @Test(.enabled(if: available, "needs faketime: scripts/ensure-deps.sh test"))
    func wallClocksAnHourOffChangeNoLeadershipAndLoseNothing() throws {
        let clocks = try TemporaryDirectory()
        defer { clocks.remove() }
        var launchers: [String: [String]] = [:]
        for node in ReplicaTrio.nodes {
            try Self.set(clocks.path + "/" + node, to: "+0")
            launchers[node] = Self.launcher(clock: clocks.path + "/" + node)
        }
        let cluster = try ReplicaTrio(launchers: launchers)
        let writer = RetryingWriter(endpoint: cluster.endpoint)
        try #require(eventually { writer.count >= 20 }, "no writes acknowledged\n\(cluster.logs)")
        let leader = try cluster.leader()
        let followers = ReplicaTrio.nodes.filter { $0 != leader }
        let before = cluster.leaderships

        // The leader's clock jumps an hour ahead, one follower's an hour back.
        try Self.set(clocks.path + "/" + leader, to: "+1h")
        try Self.set(clocks.path + "/" + followers[0], to: "-1h")
        let offset = try Self.offset(of: clocks.path + "/" + leader)
        #expect(abs(offset - 3600) < 60, "libfaketime did not move the wall clock: \(offset) s")
        let jumpedAt = writer.count
        // Long enough for every lease to be renewed several times (ttl 2 s) on the jumped clocks.
        try #require(eventually { writer.count >= jumpedAt + 100 }, "writes stopped after the clock jump\n\(cluster.logs)")
        #expect(cluster.leaderships == before, "the clock jump changed a leadership: \(before) → \(cluster.leaderships)")
        #expect(try cluster.leader() == leader)

        // A fail-over on jumped clocks: the leader is killed; a follower (one of them an hour
        // behind) takes over within the lease, and writes resume.
        cluster.workers[leader]?.stop()
        let killedAt = writer.count
        try #require(eventually { writer.count >= killedAt + 20 }, "no write acknowledged after the fail-over\n\(cluster.logs)")
        let next = try cluster.leader(excluding: [leader])
        print("clock jump: leader \(leader) at +1h, \(followers[0]) at -1h; \(writer.count - killedAt) writes after the fail-over to \(next)")
        try cluster.start(leader)
        try writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged.map(\.title))
    }

    /// Runs the program after it with libfaketime reading its offset from `clock`.
    static func launcher(clock: String) -> [String] {
        ["/usr/bin/env", "LD_PRELOAD=\(library)", "FAKETIME_TIMESTAMP_FILE=\(clock)", "FAKETIME_CACHE_DURATION=1",
         "FAKETIME_DONT_FAKE_MONOTONIC=1", "FAKETIME_DONT_RESET=1"]
    }

    /// Writes the offset `value` (libfaketime's `+1h`, `-1h`, `+0`) to `clock`, atomically.
    static func set(_ clock: String, to value: String) throws {
        try Data((value + "\n").utf8).write(to: URL(fileURLWithPath: clock), options: .atomic)
    }

    /// The wall-clock offset, in seconds, that a program launched with `clock` sees now.
    static func offset(of clock: String) throws -> Int {
        let date = try ChildProcess.run(launcher(clock: clock)[0], Array(launcher(clock: clock).dropFirst()) + ["/bin/date", "+%s"])
        let faked = try #require(Int(date.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)), "date: \(date)")
        return faked - Int(Date().timeIntervalSince1970)
    }
}
