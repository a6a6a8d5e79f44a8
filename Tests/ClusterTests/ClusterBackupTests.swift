import Foundation
import LyceumTestSupport
import Testing

/// Issue 29 through the netns cluster: partitions on three worker hosts, a write load, a backup
/// taken through both brokers with the admin key (from the variables `netns-cluster.sh env`
/// prints, as an operator would have them), then each host's partitions restored into a fresh
/// data directory, one host at a time, and every write acknowledged before the backup read back.
/// A test of ClusterTests' serialized suite, so that no two clusters run at once.
extension ClusterTests {
    @Test(.enabled(if: NetnsCluster.partitionedClusterMissing == nil, Comment(rawValue: NetnsCluster.partitionedClusterMissing ?? "")))
    func aBackupThroughTheBrokersRestoresEveryHostsPartitionsWithEveryAcknowledgedWrite() throws {
        let cluster = try NetnsCluster(partitions: Self.partitions, heartbeatMilliseconds: Self.heartbeat)
        defer { cluster.down() }
        let learners = try cluster.learners(in: Set(0..<Self.partitions), count: 12, tag: "backup")
        let ledger = cluster.state + "/backup-ledger.jsonl"
        let load = cluster.startWriting(to: ledger, learners: learners, seconds: 8)
        try Self.awaitAcknowledged(ledger)
        // What the cluster acknowledged before the backup began: the ledger's whole lines so far
        // (each is appended once its write is acknowledged).
        let acknowledged = (try? String(contentsOfFile: ledger, encoding: .utf8)) ?? ""
        let before = cluster.state + "/backup-before.jsonl"
        try String(acknowledged[..<(acknowledged.lastIndex(of: "\n").map { acknowledged.index(after: $0) } ?? acknowledged.startIndex)])
            .write(toFile: before, atomically: true, encoding: .utf8)
        try #require(Self.lineCount(of: before) > 0, "nothing was acknowledged before the backup:\n\(cluster.logs)")

        let backup = cluster.state + "/c1/backup"
        let taken = try cluster.asOperator(on: "c1", ["lyceum", "backup", "--to", backup], timeout: .seconds(180))
        try #require(taken.succeeded, "\(taken)\n\(cluster.logs)")
        #expect(taken.standardOutput.contains("\(2 * Self.partitions) journals"), "\(taken)")
        let written = try load.value(within: .seconds(120))
        #expect(written.wrong == 0, "\(written)")
        let verified = try cluster.onClient(["lyceum", "backup", "verify", backup], timeout: .seconds(120))
        #expect(verified.succeeded, "\(verified)")

        // One host at a time, so that `start` finds the other hosts' partitions served.
        for host in ["w1", "w2", "w3"] {
            try #require(try cluster.run("kill", [host]).succeeded)
            let data = cluster.state + "/\(host)/data"
            try FileManager.default.moveItem(atPath: data, toPath: data + ".before-restore")
            let owned = try #require(cluster.environment["NETNS_OWNS_\(host)"])
            let restored = try cluster.run("exec", [host, "lyceum", "restore", "--from", backup, "--data", data,
                                                    "--partitions", String(Self.partitions), "--own", owned], timeout: .seconds(120))
            try #require(restored.succeeded, "restore of \(host): \(restored)")
            let started = try cluster.run("start", [host])
            try #require(started.succeeded, "\(host) did not come back on its restored data: \(started)\n\(cluster.logs)")
        }
        let readBack = try cluster.verify(before)
        #expect(readBack.isComplete, "\(readBack)")
        #expect(readBack.checked == Self.lineCount(of: before), "\(readBack)")
    }
}
