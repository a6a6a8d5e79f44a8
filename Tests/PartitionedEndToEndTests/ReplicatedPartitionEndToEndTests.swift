import Foundation
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// Replicated partitions as real processes on loopback (issue 25, protocol/replication.md): a
/// real etcd, one `lyceum broker`, and three `lyceum worker`s with `replicas 3` holding the same
/// partition of books. A writer creates books one at a time through the broker, retrying each
/// with its `request_id` until acknowledged, while the leader's process is killed or paused.
/// Every acknowledged book is then read back through the broker, and none was applied twice.
/// `lyceum status` and each worker's metrics report the leader, the epoch and the followers' lag;
/// a leader stopped with SIGTERM resigns, so that a follower takes over without waiting for the
/// lease to expire.
@Suite(.serialized, .offTheCooperativePool) struct ReplicatedPartitionEndToEndTests {
    @Test func theLeadersProcessIsKilledUnderWritesAndNoAcknowledgedWriteIsLostOrDoubled() throws {
        try Self.killTheLeaderUnderWrites(try Deployment.replicated())
    }

    /// Writes through `cluster`'s broker, kills the leader's process (SIGKILL) once 100 are
    /// acknowledged, writes 100 more, and expects every acknowledged book once.
    static func killTheLeaderUnderWrites(_ cluster: Deployment) throws {
        let writer = Writer(endpoint: cluster.endpoint, security: try cluster.clientSecurity)
        defer { writer.stop() }
        try #require(eventually { writer.count >= 100 }, "no writes acknowledged")

        let leader = try cluster.leader()
        let killedAt = ContinuousClock.now
        let before = writer.count
        cluster.workers[leader]?.signal(SIGKILL)
        try #require(eventually { writer.count >= before + 100 }, "no write acknowledged after the kill")
        writer.stop()
        writer.printFailOver(around: killedAt, "the leader killed")
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
    }

    /// The leader stopped with SIGTERM under writes finishes its requests in hand, resigns (its
    /// leader key deleted, its lease revoked) and exits 0; a follower leads without waiting for
    /// the lease's TTL, and every acknowledged write is there once. The fail-over is printed.
    @Test func aLeaderStoppedWithSIGTERMResignsAndAFollowerTakesOverAtOnce() throws {
        let cluster = try Deployment.replicated()
        let writer = Writer(endpoint: cluster.endpoint)
        defer { writer.stop() }
        try #require(eventually { writer.count >= 100 }, "no writes acknowledged")

        let leader = try cluster.leader()
        let stoppedAt = ContinuousClock.now
        let before = writer.count
        let worker = try #require(cluster.workers[leader])
        let status = worker.signal(SIGTERM)
        let exited = ContinuousClock.now - stoppedAt
        #expect(status == 0, "\(worker.standardError)")
        #expect(worker.standardError.contains("replicas stopped"), "\(worker.standardError)")
        try #require(eventually { writer.count >= before + 100 }, "no write acknowledged after SIGTERM")
        writer.stop()
        print("the leader exited \(exited) after SIGTERM")
        writer.printFailOver(around: stoppedAt, "the leader stopped with SIGTERM")
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
    }

    /// The leader's disk made slow (strace delays each of its process's fdatasyncs by 5 s) while
    /// its followers' are not: writes go on being acknowledged at the followers' pace, since the
    /// two followers are a majority without the leader's own sync, which runs beside theirs and
    /// never on the loop that sends the replies. Counts, not times: one writer, one write in
    /// flight, gets 40 acknowledged while the leader completes far fewer syncs (a reply that
    /// waited for the leader's sync would need one each). Nothing acknowledged is lost.
    @Test func aLeaderWithASlowDiskAcknowledgesAtItsFollowersPace() throws {
        let cluster = try Deployment.replicated()
        let writer = Writer(endpoint: cluster.endpoint)
        defer { writer.stop() }
        try #require(eventually { writer.count >= 20 }, "no writes acknowledged")
        let leader = try cluster.leader()
        let worker = try #require(cluster.workers[leader])
        let strace = try ChildProcess("/usr/bin/strace", [
            "-f", "-qq", "-e", "trace=fdatasync", "-e", "inject=fdatasync:delay_enter=5000000", "-p", String(worker.processIdentifier),
        ])
        defer { strace.stop() }
        /// The leader's fdatasyncs that returned since strace attached.
        func leaderSyncs() -> Int {
            strace.standardError.split(separator: "\n").filter { $0.contains("fdatasync") && $0.contains(") = 0") }.count
        }
        try #require(eventually { strace.standardError.contains("fdatasync(") }, "strace never saw the leader sync: \(strace.standardError)")
        let before = (writes: writer.count, syncs: leaderSyncs())
        try #require(eventually { writer.count >= before.writes + 40 }, "no writes acknowledged beside the slow leader\n\(cluster.logs)")
        let syncs = leaderSyncs() - before.syncs
        print("slow leader disk: \(writer.count - before.writes) writes acknowledged while the leader completed \(syncs) fdatasyncs")
        #expect(syncs < 10, "the replies waited for the leader's own syncs")
        strace.stop()
        writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
    }

    /// `lyceum status` (JSON, and tables on a terminal) and the workers' metrics show the
    /// leader, its epoch and each follower's lag: 0 once writes stop, then growing for a
    /// follower that is stopped while writes go on.
    @Test func statusAndMetricsShowTheLeaderTheEpochAndEachFollowersLag() throws {
        let cluster = try Deployment.replicated()
        let writer = Writer(endpoint: cluster.endpoint)
        defer { writer.stop() }
        try #require(eventually { writer.count >= 50 }, "no writes acknowledged")
        writer.stop()
        let leader = try cluster.leader()
        let followers = cluster.workers.keys.filter { $0 != leader }.sorted()

        // Quiescent: every follower has everything.
        var row: [String: Any] = [:]
        try #require(eventually {
            row = try cluster.statusRow()
            let replicas = row["replicas"] as? [[String: Any]] ?? []
            return row["leader"] as? String == leader && replicas.count == 3
                && replicas.filter { ($0["node"] as? String) != leader }.allSatisfy { $0["lag_records"] as? Int == 0 && $0["lag_bytes"] as? Int == 0 }
        }, "\(row)")
        let epoch = try #require(row["epoch"] as? Int)
        #expect(epoch > 0)
        for replica in row["replicas"] as? [[String: Any]] ?? [] {
            let node = replica["node"] as? String ?? ""
            #expect(replica["role"] as? String == (node == leader ? "leading" : "following"), "\(replica)")
            #expect(replica["epoch"] as? Int == epoch, "\(replica)")
        }
        print("status: \(row)")

        let leaderMetrics = try Metrics.scrape(port: cluster.metricsPorts[leader]!)
        let partition = ["service": "books", "partition": "0"]
        #expect(leaderMetrics.value("lyceum_replica_leader", partition) == 1)
        #expect(leaderMetrics.value("lyceum_replica_epoch", partition) == Double(epoch))
        for follower in followers {
            let labels = partition.merging(["follower": follower]) { $1 }
            #expect(leaderMetrics.samples.contains { $0.name == "lyceum_replica_lag_records" && $0.labels == labels && $0.value == 0 }, "\(leaderMetrics.samples.filter { $0.name.hasPrefix("lyceum_replica") })")
            #expect(leaderMetrics.samples.contains { $0.name == "lyceum_replica_lag_bytes" && $0.labels == labels && $0.value == 0 })
        }
        let waited = leaderMetrics.value("lyceum_replica_commit_wait_seconds_count", partition)
        #expect(waited >= 50, "every acknowledged write waited for its majority once")
        print("commit wait: \(waited) writes, \(leaderMetrics.value("lyceum_replica_commit_wait_seconds_sum", partition)) s in all")
        #expect(leaderMetrics.value("lyceum_journal_last_sequence", partition) >= 50, "the leader's journal is labelled as its partition's")
        for follower in followers {
            let metrics = try Metrics.scrape(port: cluster.metricsPorts[follower]!)
            #expect(metrics.samples.contains { $0.name == "lyceum_replica_leader" && $0.labels == partition && $0.value == 0 })
            #expect(metrics.value("lyceum_replica_epoch", partition) == Double(epoch))
            #expect(!metrics.samples.contains { $0.name == "lyceum_replica_lag_records" }, "only the leader reports lag")
            #expect(metrics.value("lyceum_journal_last_sequence", partition) == leaderMetrics.value("lyceum_journal_last_sequence", partition))
        }

        if PseudoTerminal.script != nil {
            let table = try PseudoTerminal.run(
                "\(LyceumProcess.executable.path) status --broker \(cluster.endpoint) --partitions 1")
            let lines = table.split(separator: "\n").map(String.init)
            let header = try #require(lines.first { $0.hasPrefix("SERVICE ") && $0.contains("PARTITION") }, "\(table)")
            #expect(header.contains(" OWNERS ") && header.hasSuffix("  EPOCH  FOLLOWERS"), "\(table)")
            let books = try #require(lines.first { $0.hasPrefix("books ") && $0.contains("owned") }, "\(table)")
            #expect(books.contains(" \(epoch)  ") && followers.allSatisfy { books.contains("\($0) lag 0 (0 B)") }, "\(table)")
            // Each node's share of the leaderships beside what it holds.
            #expect(lines.contains { $0.hasPrefix(leader + " ") && $0.hasSuffix("1 held, 1 led") }, "\(table)")
            #expect(followers.allSatisfy { follower in lines.contains { $0.hasPrefix(follower + " ") && $0.hasSuffix(", 0 led") } }, "\(table)")
            print(table)
        }

        // A follower stopped while writes go on: its lag grows; the other keeps the majority.
        let stopped = followers[0]
        try #require(cluster.workers[stopped]?.suspend() == true)
        defer { cluster.workers[stopped]?.send(SIGCONT) }
        let more = Writer(endpoint: cluster.endpoint, prefix: "more")
        defer { more.stop() }
        try #require(eventually { more.count >= 20 }, "no writes acknowledged with a follower stopped")
        more.stop()
        let labels = partition.merging(["follower": stopped]) { $1 }
        var lagging = try Metrics.scrape(port: cluster.metricsPorts[leader]!)
        try #require(eventually {
            lagging = try Metrics.scrape(port: cluster.metricsPorts[leader]!)
            return lagging.value("lyceum_replica_lag_records", labels) >= 20
        }, "\(lagging.samples.filter { $0.name.hasPrefix("lyceum_replica") })")
        #expect(lagging.value("lyceum_replica_lag_bytes", labels) > 0)
        #expect(lagging.value("lyceum_replica_lag_records", partition.merging(["follower": followers[1]]) { $1 }) == 0)
        print("a stopped follower: lag \(lagging.value("lyceum_replica_lag_records", labels)) records, \(lagging.value("lyceum_replica_lag_bytes", labels)) bytes")
        row = try cluster.statusRow()
        let stoppedRow = (row["replicas"] as? [[String: Any]] ?? []).first { $0["node"] as? String == stopped }
        // The stopped node cannot answer for itself: its lag comes from the leader's report.
        #expect((stoppedRow?["lag_records"] as? Int ?? 0) >= 20, "\(row)")
    }

    /// A leader paused past its lease (SIGSTOP) is replaced; resumed, it steps down (its
    /// partition removed from the brokers, its late writes never acknowledged) and follows the
    /// new leader; when that one is killed, one of the two left leads (the resumed one with its
    /// state replayed from its journal, if it wins).
    @Test func aLeaderPausedPastItsLeaseStepsDownAndTheSetGoesOnAfterTheNextLeaderIsKilled() throws {
        let cluster = try Deployment.replicated()
        let writer = Writer(endpoint: cluster.endpoint)
        defer { writer.stop() }
        try #require(eventually { writer.count >= 100 }, "no writes acknowledged")

        let paused = try cluster.leader()
        let worker = try #require(cluster.workers[paused])
        let pausedAt = ContinuousClock.now
        var before = writer.count
        try #require(worker.suspend())
        try #require(eventually { writer.count >= before + 100 }, "no write acknowledged while the leader was paused")
        worker.send(SIGCONT)
        let resumedAt = ContinuousClock.now
        writer.printFailOver(around: pausedAt, "the leader paused")
        try #require(eventually { worker.standardError.contains("partition no longer led") }, "\(worker.standardError)")
        print("the resumed leader logged its step-down \(ContinuousClock.now - resumedAt) after SIGCONT (polled)")

        // Kill every other replica but one, leader first: the resumed one must be able to lead.
        let second = try cluster.leader(excluding: [paused])
        let killedAt = ContinuousClock.now
        before = writer.count
        cluster.workers[second]?.signal(SIGKILL)
        try #require(eventually { writer.count >= before + 100 }, "no write acknowledged after the second kill")
        writer.stop()
        writer.printFailOver(around: killedAt, "the second leader killed")
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
    }
}

/// Creates ada's books one at a time through the broker, each retried with its `request_id`
/// until acknowledged, on a thread of its own until stopped. Titles and request ids are
/// `prefix-N`: a second writer needs another prefix, or the request ledger answers its writes
/// as the first one's.
final class Writer: @unchecked Sendable {
    private let acks = Mutex<[(title: String, at: ContinuousClock.Instant)]>([])
    private let stopping = Atomic(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts writing books `prefix-N` through the broker at `endpoint`, a client with `security`.
    init(endpoint: String, security: SocketSecurity = .plaintext, prefix: String = "book") {
        Thread.detachNewThread { [self] in
            defer { finished.signal() }
            guard let context = try? Context() else { return }
            var number = 0
            while !stopping.load(ordering: .relaxed) {
                number += 1
                let title = "\(prefix)-\(number)"
                let body = #"{"op":"create","learner":"ada","title":"\#(title)","author":"A","genre":"Mystery","rating":3,"request_id":"\#(title)"}"#
                while !stopping.load(ordering: .relaxed) {
                    let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(2), attempts: 1, security: security), context: context)
                    defer { client.close() }
                    if let reply = try? client.call("books", body: [Array(body.utf8)]), reply.count == 1, let parsed = try? parse(reply[0]), parsed.isOK {
                        acks.withLock { $0.append((title, .now)) }
                        break
                    }
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
        }
    }

    var count: Int { acks.withLock { $0.count } }
    var acknowledged: [(title: String, at: ContinuousClock.Instant)] { acks.withLock { $0 } }

    /// Stops after the write in hand; idempotent.
    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    /// Prints the fail-over time: the longest gap between two acknowledgements from the last
    /// one before `instant` on (a reply the old leader sent just before `instant` may arrive
    /// after it, so the first acknowledgement after `instant` is not always the new leader's).
    func printFailOver(around instant: ContinuousClock.Instant, _ what: String) {
        let all = acknowledged
        guard let start = all.lastIndex(where: { $0.at < instant }), start + 1 < all.count else { return }
        let gap = zip(all[start...], all[(start + 1)...]).map { $1.at - $0.at }.max() ?? .zero
        print("fail-over (\(what), lease ttl 2 s): \(gap), the longest gap between acknowledgements after it (\(all.count) acknowledged)")
    }
}
