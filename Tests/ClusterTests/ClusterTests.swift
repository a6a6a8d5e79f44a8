import Foundation
import LyceumTestSupport
import Testing

/// Issue 17's scenarios on a real network: two brokers, three worker hosts and a client host,
/// each in its own network namespace, made and removed by `deploy/netns-cluster.sh` for each test.
/// Every client runs on the client host; what a test checks is what the cluster acknowledged
/// (Clients/ledger.py keeps the ledger), read back afterwards.
@Suite(.serialized, .offTheCooperativePool, .enabled(if: NetnsCluster.unavailability == nil, Comment(rawValue: NetnsCluster.unavailability ?? "")))
struct ClusterTests {
    /// Small enough to come up quickly, and more than one partition per worker host.
    static let partitions = 6
    /// Heartbeats of 1 s: a peer is given up after 3 s, which keeps the outages below short.
    static let heartbeat = 1000

    /// A cluster that cannot come up (its workers exit at once) is torn down by `up` itself:
    /// no namespace and no process is left, only the state directory with the logs; `down` then
    /// removes that and is idempotent.
    @Test func anUpThatFailsLeavesNothingBehind() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let fake = scratch.path + "/lyceum"
        try """
            #!/bin/sh
            [ "$1" = worker ] && { echo "a worker that cannot start" >&2; exit 1; }
            exec '\(LyceumProcess.executable.path)' "$@"
            """.write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        let state = scratch.path + "/cluster", prefix = "lcf\(getpid())-"
        let up = try Command.run(NetnsCluster.script, ["up", "--state", state, "--prefix", prefix, "--partitions", "0", "--timeout", "3"],
                                 environment: ["LYCEUM": fake], timeout: .seconds(120))
        #expect(up.status == 1, "\(up)")
        #expect(up.standardError.contains("missing:") && up.standardError.contains("a worker that cannot start"), "\(up)")
        let namespaces = try Command.run("/usr/bin/env", ["ip", "netns", "list"], timeout: .seconds(10))
        #expect(!namespaces.standardOutput.contains(prefix), "\(namespaces)")
        let pidFiles = try FileManager.default.subpathsOfDirectory(atPath: state).filter { $0.hasSuffix(".pid") }
        #expect(pidFiles.isEmpty, "\(pidFiles)")
        let brokerLog = try String(contentsOfFile: state + "/b1/logs/broker.log", encoding: .utf8)
        #expect(brokerLog.contains("broker stopped"), "the broker was stopped in order: \(brokerLog)")
        for _ in 0..<2 {
            let down = try Command.run(NetnsCluster.script, ["down", "--state", state], timeout: .seconds(60))
            #expect(down.succeeded, "\(down)")
        }
        #expect(!FileManager.default.fileExists(atPath: state))
    }

    /// `up --foreground` stays up until Ctrl-C, then stops everything and removes it all.
    @Test(.enabled(if: NetnsCluster.partitionedClusterMissing == nil, Comment(rawValue: NetnsCluster.partitionedClusterMissing ?? "")))
    func aForegroundClusterIsRemovedOnControlC() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let state = scratch.path + "/cluster", prefix = "lcg\(getpid())-"
        let foreground = try Command(NetnsCluster.script, ["up", "--foreground", "--state", state, "--prefix", prefix, "--partitions", "3", "--timeout", "120"],
                                     environment: ["LYCEUM": LyceumProcess.executable.path])
        defer {
            // Whatever happened above, nothing of this cluster may outlive the test.
            foreground.stop()
            _ = try? Command.run(NetnsCluster.script, ["down", "--state", state, "--prefix", prefix], timeout: .seconds(60))
        }
        try #require(foreground.waitForLine(startingWith: "cluster ready"),
                     "up --foreground never got ready:\n\(foreground.standardOutput)\n\(foreground.standardError)")
        foreground.send(SIGINT)
        #expect(foreground.waitForExit() == 0, "\(foreground.standardError)")
        #expect(foreground.standardOutput.split(separator: "\n").contains("cluster down"), "\(foreground.standardOutput)")
        let namespaces = try Command.run("/usr/bin/env", ["ip", "netns", "list"], timeout: .seconds(10))
        #expect(!namespaces.standardOutput.contains(prefix), "\(namespaces)")
        #expect(!FileManager.default.fileExists(atPath: state))
    }

    @Test(.enabled(if: NetnsCluster.partitionedClusterMissing == nil, Comment(rawValue: NetnsCluster.partitionedClusterMissing ?? "")))
    func benchVerifyMixAcrossEveryPartitionHasNoWrongReply() throws {
        let cluster = try NetnsCluster(partitions: Self.partitions, heartbeatMilliseconds: Self.heartbeat)
        defer { cluster.down() }
        // 120 learners cover the 6 partitions many times over (each learner's partition is
        // FNV-1a of its id; 120 random ids miss one of 6 with probability 6·(5/6)^120 ≈ 2e-9).
        let bench = try cluster.onClient(["lyceum", "bench", "--broker", cluster.brokers[0], "--scenario", "mix", "--verify",
                                          "--learners", "120", "--books", "200", "--in-flight", "16", "--duration", "4s", "--warmup", "1s",
                                          "--timeout", "5s", "--json"] + cluster.curveFlags("app"), timeout: .seconds(90))
        #expect(bench.succeeded, "bench --verify reported errors or wrong replies:\n\(bench)\n\(cluster.logs)")
        let report = try JSONDecoder().decode(BenchReport.self, from: Data(bench.standardOutput.utf8))
        #expect(report.requests > 100 && report.errorCount == 0 && report.wrongReplies.isEmpty, "\(bench)")
    }

    @Test(.enabled(if: NetnsCluster.partitionedClusterMissing == nil, Comment(rawValue: NetnsCluster.partitionedClusterMissing ?? "")))
    func aKilledWorkerHostFailsItsLearnersFastAndLosesNothingAcknowledged() throws {
        let cluster = try NetnsCluster(partitions: Self.partitions, heartbeatMilliseconds: Self.heartbeat)
        defer { cluster.down() }
        let onW1 = try cluster.learners(in: cluster.partitions(of: "w1"), count: 4, tag: "w1")
        let elsewhere = try cluster.learners(in: cluster.partitions(of: "w2").union(cluster.partitions(of: "w3")), count: 4, tag: "other")
        let ledger = cluster.state + "/killed.jsonl"
        let written = try cluster.startWriting(to: ledger, learners: onW1 + elsewhere, seconds: 3).value()
        #expect(written.acknowledged > 0 && written.wrong == 0, "\(written)")

        try #require(try cluster.run("kill", ["w1"]).succeeded)
        // Once the brokers have given w1 up (at once when its connections close, at the latest
        // after the heartbeat expiry), its learners get an error, not a hang; others are served.
        Thread.sleep(forTimeInterval: Double(Self.heartbeat * 4) / 1000)
        let probe: [String: ProbeAnswer] = try cluster.ledger("probe", ["--learners", (onW1 + elsewhere).joined(separator: ","), "--attempts", "1", "--timeout", "20"],
                                       timeout: .seconds(60))
        for learner in onW1 {
            let answer = try #require(probe[learner])
            // An error, not the client's timeout: how long it took is a figure, printed.
            print("cluster: \(learner) on the killed w1 answered \(answer.code ?? "ok") after \(answer.seconds) s")
            #expect(!answer.ok && answer.code != "timed_out", "\(learner) on w1 was not failed fast: \(answer)")
        }
        for learner in elsewhere {
            #expect(probe[learner]?.ok == true, "\(learner) (not on w1): \(String(describing: probe[learner]))")
        }

        let restarted = try cluster.run("start", ["w1"])
        try #require(restarted.succeeded, "w1 did not come back: \(restarted)\n\(cluster.logs)")
        let verified = try cluster.verify(ledger)
        #expect(verified.isComplete, "\(verified)")
    }

    @Test(.enabled(if: NetnsCluster.partitionedClusterMissing == nil, Comment(rawValue: NetnsCluster.partitionedClusterMissing ?? "")))
    func aLinkDownPastTheHeartbeatExpiryReRegistersAndLosesNothing() throws {
        let cluster = try NetnsCluster(partitions: Self.partitions, heartbeatMilliseconds: Self.heartbeat)
        defer { cluster.down() }
        let learners = try cluster.learners(in: Set(0..<Self.partitions), count: 12, tag: "link")
        // Retries span the outage: a write to w2 waits, fails over nothing, and is retried with
        // its request_id, so it is applied once however many times it is sent.
        let (written, verified) = try Self.writeThrough(cluster, learners: learners, seconds: 12) { _ in
            try #require(try cluster.run("link", ["w2", "down"]).succeeded)
            Thread.sleep(forTimeInterval: Double(Self.heartbeat * 5) / 1000)
            try #require(try cluster.run("link", ["w2", "up"]).succeeded)
            // `start` starts nothing here (every process runs) and waits until w2's partitions are
            // registered with both brokers again.
            let reRegistered = try cluster.run("start", ["w2"])
            #expect(reRegistered.succeeded, "w2 did not re-register: \(reRegistered)\n\(cluster.logs)")
        }
        #expect(written.wrong == 0, "replies that were not the request's: \(written)")
        #expect(verified.isComplete, "\(verified) after \(written)")
    }

    @Test(.enabled(if: NetnsCluster.partitionedClusterMissing == nil, Comment(rawValue: NetnsCluster.partitionedClusterMissing ?? "")))
    func aBrokerKilledDuringLoadLosesNoAcknowledgedWrite() throws {
        let cluster = try NetnsCluster(partitions: Self.partitions, heartbeatMilliseconds: Self.heartbeat)
        defer { cluster.down() }
        let learners = try cluster.learners(in: Set(0..<Self.partitions), count: 12, tag: "broker")
        var acknowledgedBeforeKill = 0
        // Read back through the surviving broker only.
        let (written, verified) = try Self.writeThrough(cluster, learners: learners, seconds: 8, readingThrough: [cluster.brokers[1]]) { ledger in
            acknowledgedBeforeKill = Self.lineCount(of: ledger)
            try #require(try cluster.run("kill", ["b1"]).succeeded)
        }
        #expect(written.wrong == 0, "\(written)")
        #expect(written.acknowledged > acknowledgedBeforeKill, "no write was acknowledged after b1 died: \(written)\n\(cluster.logs)")
        #expect(verified.isComplete, "\(verified)")
    }

    /// Needs partmove's `lyceum partitions move` (not on main when this was written): enabled by
    /// itself once the binary has the command.
    @Test(.enabled(if: NetnsCluster.lyceumHasPartitionsCommand("move"), "needs `lyceum partitions move` (partmove), not in this build"))
    func aPartitionMovedDuringWriteLoadKeepsEveryAcknowledgedWriteOnItsNewOwner() throws {
        let cluster = try NetnsCluster(partitions: Self.partitions, heartbeatMilliseconds: Self.heartbeat)
        defer { cluster.down() }
        let moving = try #require(cluster.partitions(of: "w1").min())
        let learners = try cluster.learners(in: [moving], count: 4, tag: "moving") + cluster.learners(in: cluster.partitions(of: "w3"), count: 4, tag: "staying")
        let (written, verified) = try Self.writeThrough(cluster, learners: learners, seconds: 8, timeout: 2) { _ in
            let move = try cluster.onClient(["lyceum", "partitions", "move", String(moving), "--to", "w2"]
                                            + cluster.brokers.flatMap { ["--broker", $0] } + cluster.curveFlags("admin"), timeout: .seconds(60))
            #expect(move.succeeded, "\(move)\n\(cluster.logs)")
        }
        #expect(written.wrong == 0, "\(written)")
        #expect(verified.isComplete, "\(verified)")
        // The reads above came from the new owner: w2 holds the partition and w1 no longer does.
        for (node, holds) in [("w2", true), ("w1", false)] {
            let described = try cluster.onClient(["lyceum", "call", "--broker", cluster.brokers[0]] + cluster.curveFlags("admin")
                                                 + ["lyceum.node.\(node)", #"{"op":"describe"}"#], timeout: .seconds(30))
            let reply = try? JSONSerialization.jsonObject(with: Data(described.standardOutput.utf8)) as? [String: Any]
            let held = ((reply?["result"] as? [String: Any])?["held"] as? [[String: Any]]) ?? []
            let holdsIt = held.contains { $0["service"] as? String == "books" && $0["partition"] as? Int == moving }
            #expect(described.succeeded && holdsIt == holds, "\(node): \(described)")
        }
    }

    /// Waits until `ledger` holds `count` acknowledged writes (its whole lines: ledger.py appends
    /// each once it is acknowledged): a load under way, before a fault.
    static func awaitAcknowledged(_ ledger: String, count: Int = 20) throws {
        let written = eventually { ((try? String(contentsOfFile: ledger, encoding: .utf8)) ?? "").filter { $0 == "\n" }.count >= count }
        try #require(written, "\(ledger) did not reach \(count) acknowledged writes")
    }

    /// Writes for `learners` for `seconds` (1 s attempts, 5 of them), runs `fault` with the
    /// ledger's path once writes are acknowledged, then reads every acknowledged write back through `readingThrough`
    /// (default: both brokers).
    static func writeThrough(_ cluster: NetnsCluster, learners: [String], seconds: Int, timeout: Int = 1, readingThrough brokers: [String]? = nil,
                             during fault: (String) throws -> Void) throws -> (written: WriteReport, verified: VerifyReport) {
        let ledger = cluster.state + "/ledger-\(UUID().uuidString).jsonl"
        let load = cluster.startWriting(to: ledger, learners: learners, seconds: seconds, timeout: timeout)
        try awaitAcknowledged(ledger)
        try fault(ledger)
        let written = try load.value(within: .seconds(seconds + 90))
        return (written, try cluster.verify(ledger, through: brokers))
    }

    /// The members of `lyceum bench --json` this suite checks.
    struct BenchReport: Decodable {
        let requests: Int
        let errorCount: Int
        let wrongReplies: [String]

        enum CodingKeys: String, CodingKey {
            case requests, errorCount = "error_count", wrongReplies = "wrong_replies"
        }
    }

    static func lineCount(of path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
    }
}
