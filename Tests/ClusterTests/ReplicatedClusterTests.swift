import Foundation
import LyceumTestSupport
import Testing

/// Issue 25's scenarios on a real network: every partition replicated on the three worker hosts
/// (`--replicas 3`), its leader elected in a three-member etcd on hosts of its own (e1-e3), two
/// brokers, and every client on the client host writing through both brokers with retries
/// (Clients/ledger.py keeps the ledger of what was acknowledged). What is checked is what the
/// cluster acknowledged, read back afterwards, and the replicas' journals compared record for
/// record. How long anything took is printed, never asserted (hang limits only).
@Suite(.serialized, .offTheCooperativePool, .enabled(if: NetnsCluster.unavailability == nil, Comment(rawValue: NetnsCluster.unavailability ?? "")),
       .enabled(if: NetnsCluster.replicatedClusterMissing == nil, Comment(rawValue: NetnsCluster.replicatedClusterMissing ?? "")))
struct ReplicatedClusterTests {
    /// One per worker host's worth, so that every host may lead one; 18 replicas in all.
    static let partitions = 3
    /// The leaders' etcd lease (keep-alive 0.6 s, retry 1.2 s): fail-over in seconds.
    static let lease = 3
    /// Heartbeats of 1 s: a broker gives a silent worker up after 3 s.
    static let heartbeat = 1000

    static func cluster() throws -> NetnsCluster {
        try NetnsCluster(partitions: partitions, replicas: 3, leaseSeconds: lease, heartbeatMilliseconds: heartbeat)
    }

    /// A leader host killed with SIGKILL under a write load: the others take its leaderships,
    /// every request is answered in the end (the client's retries, with their `request_id`,
    /// span the fail-over), nothing acknowledged is lost or applied twice; the host started
    /// again follows and converges.
    @Test func aKilledLeaderHostLosesNoAcknowledgedWrite() throws {
        let cluster = try Self.cluster()
        defer { cluster.down() }
        let victim = try cluster.busiestLeader()
        let learners = try cluster.learners(in: Set(0..<Self.partitions), count: 12, tag: "kill")
        let ledger = cluster.state + "/killed.jsonl"
        let load = cluster.startWriting(to: ledger, learners: learners, seconds: 15, timeout: 2, attempts: 12)
        try ClusterTests.awaitAcknowledged(ledger)
        try #require(try cluster.run("kill", [victim]).succeeded)
        let written = try load.value(within: .hangLimit)
        print("replicated cluster: leader host \(victim) killed under load: \(written.acknowledged) acknowledged, longest wait \(written.longestWait ?? -1) s, errors \(written.errors)")
        #expect(written.wrong == 0 && written.errors.isEmpty, "\(written)\n\(cluster.logs)")
        let verified = try cluster.verify(ledger)
        #expect(verified.isComplete, "\(verified)")
        let leaders = try cluster.leaders()
        #expect(leaders.count == 2 * Self.partitions && !leaders.values.contains(victim), "\(leaders)")

        let restarted = try cluster.run("start", [victim])
        try #require(restarted.succeeded, "\(restarted)")
        let differences = cluster.awaitConvergence()
        #expect(differences.isEmpty, "the journals differ: \(differences)")
        // The returned host gets its share back by the workers' own leadership balance.
        var now: [String: String] = [:]
        let balanced = eventually { now = (try? cluster.leaders()) ?? [:]; return cluster.isBalanced(now) && now.values.contains(victim) }
        print("replicated cluster: leaderships after \(victim) returned: \(now.sorted { $0.key < $1.key })")
        #expect(balanced, "\(now)\n\(cluster.logs)")
    }

    /// A leader host cut off the network for longer than its lease while clients write through
    /// both brokers. The others take its leaderships. In its own namespace, a broker on b1's
    /// address (the cut-off workers reconnect to it) takes a write for a partition it led: no
    /// acknowledgement. After the link is back it follows, its journals converge with the
    /// leaders', and nothing acknowledged is lost.
    @Test func aLeaderCutOffPastItsLeaseAcknowledgesNothingAndRejoinsAsAFollower() throws {
        let cluster = try Self.cluster()
        defer { cluster.down() }
        let victim = try cluster.busiestLeader()
        let led = try #require(cluster.leaders().filter { $0.key.hasPrefix("books.") && $0.value == victim }.keys.sorted().first)
        let partition = try #require(Int(led.dropFirst("books.p".count)))
        let learners = try cluster.learners(in: Set(0..<Self.partitions), count: 12, tag: "cut")
        let ledger = cluster.state + "/cut.jsonl"
        let load = cluster.startWriting(to: ledger, learners: learners, seconds: 30, timeout: 2, attempts: 20)
        try ClusterTests.awaitAcknowledged(ledger)
        try #require(try cluster.run("link", [victim, "down"]).succeeded)
        let cutAt = ContinuousClock.now

        // Another replica leads the partition once the victim's lease has expired.
        var successor: String?
        #expect(eventually(timeout: .hangLimit) {
            successor = (try? cluster.leaders())?[led]
            return successor != nil && successor != victim
        }, "\(led) was never led by another host after \(victim)'s link went down")
        print("replicated cluster: \(led) led by \(successor ?? "?") \((ContinuousClock.now - cutAt).seconds) s after \(victim)'s link went down")

        // The direct write: b1's address on the victim's own loopback, a broker with b1's keys there.
        let impostor = cluster.address(of: "b1")
        try #require(try cluster.run("exec", [victim, "ip", "addr", "add", "\(impostor)/32", "dev", "lo"]).succeeded)
        let broker = try cluster.startOn(victim, ["lyceum", "broker", "--endpoint", "tcp://\(impostor):5555", "--partitions", String(Self.partitions),
                                                  "--curve-secret-key", "\(cluster.state)/b1/keys/broker_secret",
                                                  "--authorized-keys", "\(cluster.state)/b1/keys/authorized", "--heartbeat-interval", "1000"])
        defer { broker.stop() }
        let local = "tcp://\(impostor):5555"
        var registered: [String] = []
        #expect(eventually(timeout: .hangLimit) {
            registered = cluster.registeredServices(through: local, on: victim)
            return registered.contains("lyceum.node.\(victim)")
        }, "\(victim)'s worker never registered with the broker on its own namespace: \(registered)\n\(broker.standardError)")
        print("replicated cluster: the cut-off \(victim) registers \(registered.sorted()) with the broker in its namespace")
        let target = try cluster.learners(in: [partition], count: 1, tag: "direct")
        let direct: [String: ProbeAnswer] = try cluster.ledger("probe", ["--learners", target.joined(separator: ","), "--write", "--attempts", "2", "--timeout", "5"],
                                                               brokers: [local], on: victim, timeout: .seconds(120))
        let answer = try #require(direct[target[0]])
        print("replicated cluster: a write to \(led) sent to the cut-off \(victim) answered \(answer.code ?? "ok") after \(answer.seconds) s")
        #expect(!answer.ok, "the cut-off leader acknowledged a write after its lease: \(answer)")
        broker.stop()
        try #require(try cluster.run("exec", [victim, "ip", "addr", "del", "\(impostor)/32", "dev", "lo"]).succeeded)

        try #require(try cluster.run("link", [victim, "up"]).succeeded)
        let written = try load.value(within: .hangLimit)
        print("replicated cluster: \(victim) cut off: \(written.acknowledged) acknowledged, longest wait \(written.longestWait ?? -1) s, errors \(written.errors)")
        #expect(written.wrong == 0 && written.errors.isEmpty, "\(written)\n\(cluster.logs)")
        let verified = try cluster.verify(ledger)
        #expect(verified.isComplete, "\(verified)")
        let differences = cluster.awaitConvergence()
        #expect(differences.isEmpty, "the journals differ: \(differences)")
        // Back, it may lead again, but only what the balance hands it: its share.
        var now: [String: String] = [:]
        #expect(eventually { now = (try? cluster.leaders()) ?? [:]; return cluster.isBalanced(now) }, "\(now)\n\(cluster.logs)")
    }

    /// One etcd member killed changes nothing for clients. All of etcd killed: the leaders stop
    /// acknowledging within their lease (a write sent after it is not acknowledged), reads are
    /// answered as printed; once etcd is back, leaders are elected again, every write waiting in
    /// the clients' retries is acknowledged, and nothing acknowledged is lost.
    @Test func etcdLosingAMemberChangesNothingAndLosingAllStopsWritesUntilItReturns() throws {
        let cluster = try Self.cluster()
        defer { cluster.down() }
        let learners = try cluster.learners(in: Set(0..<Self.partitions), count: 12, tag: "etcd")
        let before = try cluster.leaderEpochs()

        let member = cluster.state + "/member.jsonl"
        let (memberLoss, _) = try Self.writing(cluster, to: member, learners: learners, seconds: 10) {
            try #require(try cluster.run("kill", ["e1"]).succeeded)
        }
        print("replicated cluster: etcd member e1 killed: \(memberLoss.acknowledged) acknowledged, longest wait \(memberLoss.longestWait ?? -1) s, errors \(memberLoss.errors); leaderships unchanged: \(try cluster.leaderEpochs() == before)")
        #expect(memberLoss.wrong == 0 && memberLoss.errors.isEmpty, "\(memberLoss)")
        let memberVerified = try cluster.verify(member)
        #expect(memberVerified.isComplete, "\(memberVerified)")
        try #require(try cluster.run("start", ["e1"]).succeeded)

        let outage = cluster.state + "/outage.jsonl"
        var acknowledgedBeforeReturn = 0
        let (written, _) = try Self.writing(cluster, to: outage, learners: learners, seconds: 40, attempts: 30) {
            try #require(try cluster.run("kill", ["e1", "e2", "e3"]).succeeded)
            // Past the lease and the acting window within it, nothing is acknowledged. One attempt
            // each, waiting longer than the brokers hold a request for a partition nobody leads
            // (unknown-service-timeout: lease + 3 s), so the answer printed is the cluster's.
            Thread.sleep(forTimeInterval: Double(Self.lease) + 2)
            let writes: [String: ProbeAnswer] = try cluster.ledger("probe", ["--learners", learners.joined(separator: ","), "--write", "--attempts", "1", "--timeout", "15"],
                                                                   timeout: .seconds(120))
            let reads: [String: ProbeAnswer] = try cluster.ledger("probe", ["--learners", learners.joined(separator: ","), "--attempts", "1", "--timeout", "15"],
                                                                  timeout: .seconds(120))
            print("replicated cluster: etcd down: writes answered \(Self.codes(writes)), reads answered \(Self.codes(reads))")
            #expect(writes.values.allSatisfy { !$0.ok }, "a write was acknowledged with etcd down past the lease: \(writes)")
            acknowledgedBeforeReturn = Self.lineCount(of: outage)
            try #require(try cluster.run("start", ["e1", "e2", "e3"]).succeeded, "\(cluster.logs)")
        }
        print("replicated cluster: etcd down and back: \(written.acknowledged) acknowledged (\(acknowledgedBeforeReturn) before it returned), longest wait \(written.longestWait ?? -1) s, errors \(written.errors)")
        #expect(written.wrong == 0 && written.errors.isEmpty, "\(written)\n\(cluster.logs)")
        #expect(written.acknowledged > acknowledgedBeforeReturn, "nothing was acknowledged after etcd returned")
        let verified = try cluster.verify(outage)
        #expect(verified.isComplete, "\(verified)\n\(cluster.logs)")
        #expect(try cluster.leaders().count == 2 * Self.partitions)
    }

    /// A replica host stopped, its data removed, and started empty while writes continue: it
    /// catches up from the leaders' journals (from their start: replicated leaders do not compact)
    /// and ends with the same records in the same order.
    @Test func aReplicaRebuiltFromEmptyCatchesUpWhileWritesContinue() throws {
        let cluster = try Self.cluster()
        defer { cluster.down() }
        let learners = try cluster.learners(in: Set(0..<Self.partitions), count: 12, tag: "empty")
        let ledger = cluster.state + "/empty.jsonl"
        let host = try cluster.busiestLeader()
        let (written, _) = try Self.writing(cluster, to: ledger, learners: learners, seconds: 20) {
            try #require(try cluster.run("kill", [host]).succeeded)
            let wiped = try cluster.run("wipe", [host])
            try #require(wiped.succeeded, "\(wiped)")
            try #require(try cluster.run("start", [host]).succeeded)
        }
        print("replicated cluster: \(host) rebuilt from empty under load: \(written.acknowledged) acknowledged, longest wait \(written.longestWait ?? -1) s, errors \(written.errors)")
        #expect(written.wrong == 0 && written.errors.isEmpty, "\(written)")
        let verified = try cluster.verify(ledger)
        #expect(verified.isComplete, "\(verified)")
        let differences = cluster.awaitConvergence()
        #expect(differences.isEmpty, "the journals differ: \(differences)")
    }

    /// Writes for `learners` for `seconds` (2 s attempts, `attempts` of them), runs `fault` once
    /// writes are acknowledged, and returns what the writer reported once it is done.
    static func writing(_ cluster: NetnsCluster, to ledger: String, learners: [String], seconds: Int, attempts: Int = 12,
                        during fault: () throws -> Void) throws -> (WriteReport, String) {
        let load = cluster.startWriting(to: ledger, learners: learners, seconds: seconds, timeout: 2, attempts: attempts)
        try ClusterTests.awaitAcknowledged(ledger)
        try fault()
        return (try load.value(within: .hangLimit), ledger)
    }

    static func codes(_ answers: [String: ProbeAnswer]) -> [String: Int] {
        answers.values.reduce(into: [:]) { $0[$1.code ?? "ok", default: 0] += 1 }
    }

    static func lineCount(of path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
    }
}

extension NetnsCluster {
    /// What the `lyceum` and the machine lack to run a replicated cluster, or `nil`.
    static let replicatedClusterMissing: String? = {
        guard partitionedClusterMissing == nil else { return partitionedClusterMissing }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/etcd"), FileManager.default.isExecutableFile(atPath: "/usr/bin/etcdctl") else {
            return "the replicated cluster needs Debian's etcd-server and etcd-client (scripts/ensure-deps.sh test)"
        }
        let help = try? Command.run(LyceumProcess.executable.path, ["worker", "--help"], timeout: .seconds(20))
        guard help?.standardOutput.contains("--replicas") == true else { return "this lyceum's worker has no --replicas" }
        // Every socket of the netns cluster is CURVE: a worker that refuses replicas with a CURVE
        // key (before the replication channel had CURVE) cannot run in it. It says so before it
        // reads the key, so the key need not exist.
        let refusal = try? Command.run(LyceumProcess.executable.path, [
            "worker", "--broker", "tcp://127.0.0.1:1", "--partitions", "3", "--replicas", "3", "--etcd-endpoint", "http://127.0.0.1:1",
            "--replication-endpoint", "tcp://127.0.0.1:1", "--curve-secret-key", "/nonexistent/worker_secret"], timeout: .seconds(20))
        if refusal?.standardError.contains("no CURVE yet") == true { return "this lyceum's worker refuses replicas above 1 with CURVE" }
        return nil
    }()

    /// A host's address in this cluster (the subnet `up` was given).
    func address(of host: String) -> String {
        let octets = ["b1": 11, "b2": 12, "w1": 21, "w2": 22, "w3": 23, "c1": 31, "m1": 41, "e1": 51, "e2": 52, "e3": 53]
        let subnet = (brokers.first ?? "").dropFirst("tcp://".count).split(separator: ".").prefix(3).joined(separator: ".")
        return "\(subnet).\(octets[host] ?? 0)"
    }

    /// The leader of each replicated partition's key in etcd (`books.p0` → `w2`), read from c1.
    func leaders() throws -> [String: String] {
        try leaderKeys().mapValues(\.node)
    }

    /// Each leader key's node and epoch (its create revision).
    func leaderEpochs() throws -> [String: String] {
        try leaderKeys().mapValues { "\($0.node)@\($0.epoch)" }
    }

    private func leaderKeys() throws -> [String: (node: String, epoch: Int)] {
        let result = try run("exec", ["c1", "etcdctl", "--endpoints", environment["NETNS_ETCD"] ?? "", "--dial-timeout", "1s", "--command-timeout", "3s",
                                      "get", "--prefix", "lyceum/leader/", "-w", "json"], timeout: .seconds(30))
        guard result.succeeded, let reply = try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] else {
            throw ClusterError(what: "etcdctl get --prefix lyceum/leader/", result: result)
        }
        var keys: [String: (node: String, epoch: Int)] = [:]
        for entry in (reply["kvs"] as? [[String: Any]]) ?? [] {
            guard let key = (entry["key"] as? String).flatMap({ Data(base64Encoded: $0) }).flatMap({ String(data: $0, encoding: .utf8) }),
                  let value = (entry["value"] as? String).flatMap({ Data(base64Encoded: $0) }).flatMap({ String(data: $0, encoding: .utf8) }),
                  let node = value.split(separator: " ").first else { continue }
            keys[String(key.dropFirst("lyceum/leader/".count))] = (String(node), (entry["create_revision"] as? Int) ?? 0)
        }
        return keys
    }

    /// Whether every partition of both services is led and no host leads more than ⌈partitions
    /// / 3⌉ of one service's (the workers' leadership balance: protocol/replication.md).
    func isBalanced(_ leaders: [String: String]) -> Bool {
        let share = (partitions + 2) / 3
        return ["books.", "progress."].allSatisfy { service in
            let led = leaders.filter { $0.key.hasPrefix(service) }
            let counts = led.values.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            return led.count == partitions && counts.values.allSatisfy { $0 <= share }
        }
    }

    /// The worker host leading the most `books` partitions.
    func busiestLeader() throws -> String {
        let counts = try leaders().filter { $0.key.hasPrefix("books.") }.values.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        return try #require(counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key)
    }

    /// The journal record lines of `service`'s partition `partition` on worker host `host`.
    func records(on host: String, service: String, partition: Int) -> [Substring] {
        let text = (try? String(contentsOfFile: "\(state)/\(host)/data/\(service)/p\(partition)/journal.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.contains(#""seq":"#) }
    }

    /// Waits (within the hang limit) until every partition's journal holds the same record lines
    /// in the same order on w1, w2 and w3; returns what still differs then ([] once they converge).
    func awaitConvergence() -> [String] {
        var differences: [String] = []
        _ = eventually(timeout: .hangLimit) {
            differences = []
            for service in ["books", "progress"] {
                for partition in 0..<partitions {
                    let journals = ["w1", "w2", "w3"].map { records(on: $0, service: service, partition: partition) }
                    if Set(journals.map { $0.joined(separator: "\n") }).count != 1 {
                        differences.append("\(service).p\(partition): \(journals.map(\.count)) records")
                    }
                }
            }
            if differences.isEmpty { return true }
            Thread.sleep(forTimeInterval: 0.5)
            return false
        }
        return differences
    }

    /// The services with at least one worker at `broker`, asked from `host` with the admin key.
    func registeredServices(through broker: String, on host: String) -> [String] {
        guard let result = try? run("exec", [host, "lyceum", "status", "--broker", broker, "--timeout", "1000"] + curveFlags("admin"), timeout: .seconds(30)),
              result.succeeded,
              let reply = try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] else { return [] }
        return ((reply["services"] as? [[String: Any]]) ?? []).compactMap { service in
            ((service["workers"] as? Int) ?? 0) > 0 ? service["name"] as? String : nil
        }
    }

    /// Starts `arguments` in `host`'s namespace without waiting for it.
    func startOn(_ host: String, _ arguments: [String]) throws -> Command {
        try Command(Self.script, ["exec", "--state", state, host] + arguments, environment: ["LYCEUM": LyceumProcess.executable.path])
    }
}
