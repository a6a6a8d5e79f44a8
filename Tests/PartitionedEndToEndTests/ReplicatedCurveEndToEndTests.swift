import Coordination
import Foundation
import Journal
import LyceumTestSupport
import Testing
import ZeroMQ

/// Replicated partitions with CURVE on every socket (issue 25, protocol/replication.md,
/// "Security"): the replication links are CURVE servers with each worker's own key, admitting
/// only keys whose role in the worker's `authorized-keys` is `worker`, and a follower connects
/// only to a leader whose key (carried in the leader key's value) it holds as a worker's.
@Suite(.serialized, .offTheCooperativePool) struct ReplicatedCurveEndToEndTests {
    @Test func overCurveTheLeadersProcessIsKilledUnderWritesAndNoAcknowledgedWriteIsLostOrDoubled() throws {
        try ReplicatedPartitionEndToEndTests.killTheLeaderUnderWrites(try Deployment.replicated(keys: try ReplicaKeys()))
    }

    /// A worker process holding an `app` key (listed in the replicas' directory, so known, but
    /// not as a worker's) takes the leader key first: no replica follows it, so it never leads.
    /// Once it is gone and a worker leads, it comes back and follows in vain: the leader's ZAP
    /// handler refuses its key, and no record reaches its journal while writes are acknowledged.
    @Test func aKeyWithoutTheWorkerRoleNeitherLeadsNorFollows() throws {
        let keys = try ReplicaKeys()
        let cluster = try Deployment.replicated(keys: keys, nodes: [])
        try cluster.start("rogue")
        let etcd = try EtcdClient(endpoints: [cluster.etcd!.endpoint])
        let rogueKey = try keys.publicKey("rogue")
        let heldByRogue = eventually {
            guard let value = (try? etcd.get("lyceum/leader/books.p0")) ?? nil else { return false }
            return String(decoding: value.value, as: UTF8.self).hasSuffix(" " + rogueKey)
        }
        try #require(heldByRogue, "the rogue never took the leader key:\n\(cluster.logs)")

        let replicas = ["w1", "w2", "w3"]
        for node in replicas { try cluster.start(node) }
        let refused = eventually {
            replicas.allSatisfy { cluster.workers[$0]?.standardError.contains("not following: the leader key is not trusted") == true }
        }
        try #require(refused, "a replica followed a key without the worker role:\n\(cluster.logs)")
        #expect(cluster.workers["rogue"]?.standardError.contains("partition led") == false, "\(cluster.logs)")

        cluster.workers["rogue"]?.signal(SIGKILL)
        try waitUntilServing(["books.p0"], at: cluster.endpoint, security: try cluster.clientSecurity) { cluster.logs }
        let leader = try cluster.leader()
        try cluster.start("rogue")
        let writer = Writer(endpoint: cluster.endpoint, security: try cluster.clientSecurity)
        defer { writer.stop() }
        let zapRefused = eventually {
            cluster.workers[leader]?.standardError.contains("lacks replicate_partitions for lyceum.replication") == true
        }
        try #require(zapRefused, "the leader never refused the rogue's key:\n\(cluster.logs)")
        try #require(eventually { writer.count >= 100 }, "no writes acknowledged:\n\(cluster.logs)")
        writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
        cluster.workers["rogue"]?.stop()
        var state = KeyedJournalState()
        let rogueJournal = try Journal.check(directory: cluster.directory + "/rogue/books/p0", state: &state)
        #expect(rogueJournal.lastSequence == 0, "records reached a key without the worker role")
    }
}

/// The keys of a CURVE replica cluster: `server` (the broker's), `admin` (the test's client),
/// `w1`–`w3` (role `worker`) and `rogue` (role `app`); `replicas/`, every worker's
/// `authorized-keys`, lists the three workers, `rogue` and `admin`.
final class ReplicaKeys {
    private let keys: CurveKeys

    init() throws {
        keys = try CurveKeys().make("server", role: "admin", authorize: false).make("admin", role: "admin")
            .make("w1", role: "worker").make("w2", role: "worker").make("w3", role: "worker").make("rogue", role: "app")
        try FileManager.default.createDirectory(atPath: replicas, withIntermediateDirectories: true)
        for name in ["w1", "w2", "w3", "rogue", "admin"] {
            try FileManager.default.copyItem(atPath: keys.publicPath(name), toPath: replicas + "/" + name)
        }
    }

    /// The broker's `authorized-keys`: every key but the broker's.
    var authorized: String { keys.authorized }
    /// The workers' `authorized-keys`.
    var replicas: String { keys.directory.path + "/replicas" }

    func secretPath(_ name: String) -> String { keys.secretPath(name) }

    /// `--curve-secret-key` and `--curve-server-key` of a process with key `name`.
    func client(_ name: String) -> [String] { keys.client(name) }

    /// The security of a client of the broker with key `name`.
    func clientSecurity(_ name: String) throws -> SocketSecurity {
        .curveClient(try #require(try CurveCertificate.load(from: keys.secretPath(name)).keyPair),
                     serverKey: try CurveCertificate.load(from: keys.publicPath("server")).publicKey)
    }

    /// The Z85 public key of `name`.
    func publicKey(_ name: String) throws -> String {
        try Z85.encode(try CurveCertificate.load(from: keys.publicPath(name)).publicKey)
    }
}
