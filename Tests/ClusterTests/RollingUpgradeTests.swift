import Foundation
import LyceumTestSupport
import Testing

/// Issue 35's rolling upgrade, on loopback with a real etcd: a replicated cluster (one broker,
/// three workers holding every partition of books) started on the previous release's build
/// (tag `release-2026-12-07`, built once from a `git worktree` by `scripts/release-build.sh` and
/// cached by commit), upgraded host by host to the build under test while a client writes
/// through the broker with retries, the broker last, then one worker downgraded back. After each
/// step: no request failed, every acknowledged write so far is read back once, the three
/// journals hold the same record lines, and no process refused a replication message (the
/// builds never misread each other). And the refusal itself: a peer speaking a format version
/// this build does not read is refused, with the log line and the metric.
@Suite(.serialized, .offTheCooperativePool)
struct RollingUpgradeTests {
    /// The release the cluster starts on, and its commit if the tag is not in this clone.
    static let release = ["release-2026-12-07", "886ee9d"]

    /// Why the upgrade cannot run here (no etcd, no git history of the release), or `nil`.
    static let upgradeUnavailability: String? = {
        guard FileManager.default.isExecutableFile(atPath: EtcdServer.executable) else { return "needs Debian's etcd-server (scripts/ensure-deps.sh test)" }
        guard pythonHasZMQ else { return "the writer needs /usr/bin/python3 with pyzmq (scripts/ensure-deps.sh test)" }
        guard releaseRevision != nil else { return "this clone has neither the tag \(release[0]) nor its commit \(release[1]) (a shallow clone?)" }
        return nil
    }()

    /// The first of ``release`` this clone has.
    static let releaseRevision: String? = release.first { revision in
        // A git that cannot run finds no revision: the test is skipped, saying so.
        let found = try? Command.run("/usr/bin/env", ["git", "-C", NetnsCluster.repository.path, "rev-parse", "--verify", "--quiet", "\(revision)^{commit}"], timeout: .seconds(30))
        return found?.succeeded == true
    }

    @Test(.enabled(if: upgradeUnavailability == nil, Comment(rawValue: upgradeUnavailability ?? "")))
    func aClusterUpgradedHostByHostFromTheLastReleaseAndDowngradedLosesNothing() throws {
        let old = try Self.releaseBinary()
        let new = LyceumProcess.executable.path
        let cluster = try UpgradeCluster(binary: old)
        defer { cluster.stop() }
        let learners = (0..<12).map { "upgrade-\($0)" }
        var ledgers: [String] = []
        for (step, (host, binary, what)) in [("w1", new, "upgraded"), ("w2", new, "upgraded"), ("w3", new, "upgraded"), ("broker", new, "upgraded"),
                                             ("w2", old, "downgraded")].enumerated() {
            let ledger = cluster.data.path + "/step\(step).jsonl"
            ledgers.append(ledger)
            let done = ledger + ".done"
            let load = cluster.startWriting(to: ledger, learners: learners, until: done)
            #expect(eventually { ReplicatedClusterTests.lineCount(of: ledger) > 20 }, "no write acknowledged before \(host) was \(what)\n\(cluster.logs)")
            try cluster.restart(host, with: binary)
            let acknowledged = ReplicatedClusterTests.lineCount(of: ledger)
            #expect(eventually { ReplicatedClusterTests.lineCount(of: ledger) > acknowledged + 20 }, "no write acknowledged after \(host) was \(what)\n\(cluster.logs)")
            try #require(FileManager.default.createFile(atPath: done, contents: nil))
            let written = try load.value(within: .hangLimit)
            #expect(written.wrong == 0 && written.errors.isEmpty, "\(written)\n\(cluster.logs)")
            let verified = try cluster.verify(ledgers)
            #expect(verified.isComplete, "\(verified)")
            let differences = cluster.awaitConvergence()
            #expect(differences.isEmpty, "the journals differ after \(host) was \(what): \(differences)")
            // Each worker of this build says what it reads; one of the release says nothing, so it is spoken version 1.
            var published: Set<String> = []
            #expect(eventually { published = cluster.publishedFormats(); return published == cluster.workersOf(new) },
                    "formats published by \(published), workers of this build \(cluster.workersOf(new))")
            print("rolling upgrade: \(host) \(what) (\(cluster.builds)): \(written.acknowledged) acknowledged, longest wait \(written.longestWait ?? -1) s, "
                  + "errors \(written.errors); \(verified.checked) read back so far, \(verified.missing) missing, \(verified.duplicates) twice; "
                  + "journals equal: \(differences.isEmpty) (\(cluster.recordCount) records each)")
        }
        let refusals = cluster.logs.split(separator: "\n").filter { $0.contains("refused a replication message") || $0.contains("refused a message from the leader") }
        #expect(refusals.isEmpty, "a build refused the other's messages: \(refusals.prefix(5))")
    }

    /// A follower of this build's leader that speaks replication format v99: the leader refuses
    /// every such message before reading anything else of it, logs why, and counts it.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: EtcdServer.executable) && pythonHasZMQ, "needs etcd and pyzmq"))
    func aPeerSpeakingAnUnknownFormatVersionIsRefusedLoggedAndCounted() throws {
        let cluster = try UpgradeCluster(binary: LyceumProcess.executable.path, nodes: ["w1"])
        defer { cluster.stop() }
        let endpoint = try #require(cluster.replicationEndpoints["w1"])
        // Once the worker leads, its replication ROUTER takes follows (it waits for a majority).
        #expect(eventually { cluster.logs.contains("leadership") && cluster.logs.contains("leader(epoch:") }, "w1 never led\n\(cluster.logs)")
        let follow = #"{"v":99,"op":"follow","partition":"books.p0","epoch":1,"position":{"epoch":0,"seq":0},"node":"w9","meaning":"unknown to v2"}"#
        let peer = try Command.run("/usr/bin/python3", ["-c", """
            import sys, time, zmq
            socket = zmq.Context().socket(zmq.DEALER)
            socket.setsockopt(zmq.LINGER, 1000)
            socket.connect(sys.argv[1])
            for _ in range(5):
                socket.send(sys.argv[2].encode())
                time.sleep(0.2)
            socket.close()
            """, endpoint, follow], timeout: .seconds(60))
        try #require(peer.succeeded, "\(peer)")
        #expect(eventually { cluster.logs.contains("unsupported_version: a peer speaks replication format v99") }, "no refusal logged\n\(cluster.logs)")
        let line = cluster.logs.split(separator: "\n").first { $0.contains("format v99") }.map(String.init) ?? ""
        print("unknown format version: w1 logged \(line)")
        var count = 0.0
        #expect(eventually {
            // Not answering yet counts as none counted: the wait goes on.
            count = (try? cluster.metric("lyceum_replication_unsupported_versions_total{version=\"99\"}", of: "w1")) ?? 0
            return count >= 1
        }, "the refusal was not counted")
        print("unknown format version: lyceum_replication_unsupported_versions_total{version=\"99\"} \(count)")
    }

    /// The previous release's `lyceum`, built once and cached (`scripts/release-build.sh`).
    static func releaseBinary() throws -> String {
        let revision = try #require(releaseRevision)
        let started = ContinuousClock.now
        let built = try Command.run(NetnsCluster.repository.appendingPathComponent("scripts/release-build.sh").path, [revision], timeout: .seconds(3600))
        try #require(built.succeeded, "\(built)")
        print("rolling upgrade: \(revision)'s lyceum at \(built.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) "
              + "(\(ContinuousClock.now - started) to find or build)")
        return built.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
