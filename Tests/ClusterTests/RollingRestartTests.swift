import Foundation
import LyceumTestSupport
import Testing

/// Issue 35's rolling restart on a real network: the replicated cluster of
/// ``ReplicatedClusterTests`` (three worker hosts holding every partition, etcd on e1-e3, two
/// brokers) restarted host by host with `netns-cluster.sh restart` (w1, w2, w3, then b1, b2),
/// each step waiting until the host is ready again, while the client host writes through both
/// brokers with retries. No request may fail, no acknowledged write may be lost or applied twice,
/// and the replicas' journals end equal. The longest any write waited is printed, never asserted.
@Suite(.serialized, .offTheCooperativePool, .enabled(if: NetnsCluster.unavailability == nil, Comment(rawValue: NetnsCluster.unavailability ?? "")),
       .enabled(if: NetnsCluster.replicatedClusterMissing == nil, Comment(rawValue: NetnsCluster.replicatedClusterMissing ?? "")))
struct RollingRestartTests {
    @Test func aRollingRestartOfEveryWorkerThenEveryBrokerFailsNoRequest() throws {
        let cluster = try ReplicatedClusterTests.cluster()
        defer { cluster.down() }
        let learners = try cluster.learners(in: Set(0..<ReplicatedClusterTests.partitions), count: 12, tag: "roll")
        let ledger = cluster.state + "/rolling.jsonl"
        let done = cluster.state + "/rolling.done"
        let load = cluster.startWriting(to: ledger, learners: learners, seconds: 600, timeout: 2, attempts: 12, until: done)
        #expect(eventually { ReplicatedClusterTests.lineCount(of: ledger) > 100 }, "the load never got going\n\(cluster.logs)")

        for host in ["w1", "w2", "w3", "b1", "b2"] {
            let restarted = try cluster.run("restart", [host], timeout: .seconds(240))
            try #require(restarted.succeeded, "\(restarted)\n\(cluster.logs)")
            let summary = restarted.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
            print("rolling restart: \(summary); \(Self.handOff(on: host, in: cluster) ?? "")")
            // The writes go on through the step's end before the next host.
            let acknowledged = ReplicatedClusterTests.lineCount(of: ledger)
            #expect(eventually { ReplicatedClusterTests.lineCount(of: ledger) > acknowledged + 50 }, "writes stopped after restarting \(host)\n\(cluster.logs)")
        }
        try #require(FileManager.default.createFile(atPath: done, contents: nil))
        let written = try load.value(within: .hangLimit)
        print("rolling restart of w1-w3 then b1-b2 under load: \(written.acknowledged) acknowledged, longest wait \(written.longestWait ?? -1) s, errors \(written.errors)")
        #expect(written.wrong == 0 && written.errors.isEmpty, "\(written)\n\(cluster.logs)")
        let verified = try cluster.verify(ledger)
        print("rolling restart: \(verified.checked) read back, \(verified.missing) missing, \(verified.duplicates) applied twice")
        #expect(verified.isComplete, "\(verified)")
        let differences = cluster.awaitConvergence()
        #expect(differences.isEmpty, "the journals differ: \(differences)")
    }

    /// The last line a worker host's node process logged about handing its leaderships over
    /// before it stopped (how many, in how many milliseconds); `nil` for other hosts.
    static func handOff(on host: String, in cluster: NetnsCluster) -> String? {
        // A log that cannot be read prints no line: it is a figure, not a check.
        guard host.hasPrefix("w"), let log = try? String(contentsOfFile: "\(cluster.state)/\(host)/logs/node.log", encoding: .utf8) else { return nil }
        return log.split(separator: "\n").last { $0.contains("leaderships handed over before stopping") }.map(String.init)
    }
}
