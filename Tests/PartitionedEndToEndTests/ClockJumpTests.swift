import Foundation
import LyceumTestSupport
import Testing

/// Issue 36's moving clocks: three replicas whose wall clocks are an hour apart, then jump by
/// two or three hours under writes. Every interval Lyceum measures (leases, keep-alives,
/// time-outs, syncs, waits) is on the monotonic clock, so the jump changes no leadership and
/// loses no lease; a leader killed afterwards is still replaced within its lease, and every
/// acknowledged write is there once.
///
/// libfaketime cannot run `lyceum` (preloaded into a Swift binary it empties the arguments), so
/// the test preloads a shim of its own, compiled here: `clock_gettime` of `CLOCK_REALTIME`,
/// `gettimeofday` and `time` shifted by the seconds a file holds (read at each call, so that
/// the test moves a running process's clock by writing the file).
@Suite(.serialized, .offTheCooperativePool) struct ClockJumpTests {
    static let shimSource = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <sys/time.h>
        #include <time.h>

        /* The seconds in the file TEST_CLOCK_OFFSET_FILE names (0 without one): not a LYCEUM_
           variable, which lyceum would refuse as an unknown setting. */
        static long offset(void) {
            const char *path = getenv("TEST_CLOCK_OFFSET_FILE");
            long seconds = 0;
            FILE *file = path ? fopen(path, "r") : NULL;
            if (file) {
                if (fscanf(file, "%ld", &seconds) != 1) seconds = 0;
                fclose(file);
            }
            return seconds;
        }

        int clock_gettime(clockid_t clock, struct timespec *now) {
            static int (*real)(clockid_t, struct timespec *);
            if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
            int result = real(clock, now);
            if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) now->tv_sec += offset();
            return result;
        }

        int gettimeofday(struct timeval *now, void *zone) {
            static int (*real)(struct timeval *, void *);
            if (!real) real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
            int result = real(now, zone);
            if (result == 0 && now) now->tv_sec += offset();
            return result;
        }

        time_t time(time_t *now) {
            struct timespec spec;
            clock_gettime(CLOCK_REALTIME, &spec);
            if (now) *now = spec.tv_sec;
            return spec.tv_sec;
        }
        """#

    /// The C compiler, or why the test cannot run.
    static let compiler: String? = ["/usr/bin/cc", "/usr/bin/gcc", "/opt/swift/usr/bin/clang"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: compiler != nil, "needs a C compiler (scripts/ensure-deps.sh test installs gcc)"))
    func wallClockJumpsChangeNoLeadershipAndLoseNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let shim = directory.path + "/clock-shim.so"
        try Self.shimSource.write(toFile: directory.path + "/clock-shim.c", atomically: true, encoding: .utf8)
        let compiler = try #require(Self.compiler)
        let built = try ChildProcess.run(compiler, ["-shared", "-fPIC", "-O1", "-o", shim, directory.path + "/clock-shim.c", "-ldl"])
        try #require(built.status == 0, "the clock shim did not compile: \(built)")

        // The balance off: any leadership change in the window is the clocks'.
        let cluster = try Deployment.replicated(workerArguments: ["--leader-balance-interval", "0"])
        let clocks = ["w1": 3600, "w2": -3600, "w3": 0]
        for (node, seconds) in clocks.sorted(by: { $0.key < $1.key }) {
            let file = directory.path + "/\(node).clock"
            try String(seconds).write(toFile: file, atomically: true, encoding: .utf8)
            _ = try cluster.restart(node, launcher: ["/usr/bin/env", "LD_PRELOAD=\(shim)", "TEST_CLOCK_OFFSET_FILE=\(file)"], registering: [])
        }
        let writer = Writer(endpoint: cluster.endpoint)
        defer { writer.stop() }
        try #require(eventually { writer.count >= 50 }, "no writes acknowledged with the clocks apart\n\(cluster.logs)")

        let leader = try cluster.leader()
        let changes = Self.leadershipChanges(cluster)
        // The jump: the leader's clock goes back three hours, the followers' forward two.
        for node in clocks.keys {
            try String(node == leader ? -10_800 : 7_200).write(toFile: directory.path + "/\(node).clock", atomically: true, encoding: .utf8)
        }
        let before = writer.count
        try #require(eventually { writer.count >= before + 200 }, "no writes acknowledged after the jump\n\(cluster.logs)")
        #expect(Self.leadershipChanges(cluster) == changes, "a leadership changed with the clocks\n\(cluster.logs)")
        #expect(!cluster.logs.contains("lease lost"), "a lease was lost with the clocks\n\(cluster.logs)")
        print("clock jumps: \(writer.count - before) writes acknowledged after the jump, no leadership changed")

        // A leader killed under the moved clocks is replaced within its lease, on the monotonic clock.
        let killedAt = ContinuousClock.now
        let afterJump = writer.count
        cluster.workers[leader]?.signal(SIGKILL)
        try #require(eventually { writer.count >= afterJump + 100 }, "no write acknowledged after the leader was killed\n\(cluster.logs)")
        writer.stop()
        writer.printFailOver(around: killedAt, "the leader killed with the clocks moved")
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
        // The jump reached the running processes: the successor logged its leadership two hours
        // ahead (its clock went from +1 h or -1 h to +2 h while it ran).
        let successor = try cluster.leader(excluding: [leader])
        let led = (cluster.workers[successor]?.standardError ?? "").split(separator: "\n").filter { $0.contains("partition led") }.joined(separator: "\n")
        let stamp = try #require(Self.lastTimestamp(led), "no leadership line in \(successor)'s log")
        let ahead = stamp.timeIntervalSinceNow
        print("clock jumps: \(successor) logged its leadership \(Int(ahead)) s ahead of the test's clock")
        #expect(ahead > 6_600 && ahead < 7_800)
    }

    /// Every worker's leadership lines so far ("partition led" and "no longer led"), by node.
    static func leadershipChanges(_ cluster: Deployment) -> [String: Int] {
        cluster.workers.mapValues { worker in
            worker.standardError.split(separator: "\n").filter { $0.contains("partition led") || $0.contains("partition no longer led") }.count
        }
    }

    /// The `ts=` of the last line of `log` that has one.
    static func lastTimestamp(_ log: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in log.split(separator: "\n").reversed() {
            guard let start = line.range(of: "ts=") else { continue }
            let value = line[start.upperBound...].prefix { $0 != " " }
            if let date = formatter.date(from: String(value)) { return date }
        }
        return nil
    }
}
