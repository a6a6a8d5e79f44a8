import Access
import Foundation
import Journal
import LyceumLifecycle
import LyceumTestSupport
import Replication
import Security
import Testing
import ZeroMQ

/// The replication channel over CURVE, as a worker runs it: the leader's ROUTER is a CURVE
/// server under ZAP domain `lyceum.replication`, and the process's ZAP handler (Lyceum's
/// `Authenticator`) admits only keys whose role is `worker`. A follower holding any other key of
/// the directory (app, admin, learner, dashboard) or a key it does not list gets no record.
@Suite(.serialized, .offTheCooperativePool) struct CurveLinkTests {
    /// Keys by name, each with the role its name says (`stranger` is in no directory).
    struct Directory: KeyDirectory {
        let principals: [String: Principal]
        func principal(forKey z85PublicKey: String) -> Principal? { principals[z85PublicKey] }
    }

    @Test func onlyWorkerKeysReplicateAndTheRecordsArriveWhole() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let roles: [String: Role] = ["w1": .worker, "w2": .worker, "app": .app, "admin": .admin, "phone": .learner, "screen": .dashboard]
        var keys: [String: CurveKeyPair] = ["stranger": try CurveKeyPair.generate()]
        var principals: [String: Principal] = [:]
        for (name, role) in roles {
            keys[name] = try CurveKeyPair.generate()
            principals[try Z85.encode(keys[name]!.publicKey)] = Principal(name: name, role: role, learners: ["ada"])
        }
        let handler = try ZAPHandler(context: context, decide: Authenticator(keys: Directory(principals: principals)).decide)
        let zap = ComponentThread(handler, name: "test-zap")
        defer { _ = zap.stop() }
        try handler.waitUntilReady(timeout: .hangLimit)

        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 3, store: leaderStore, history: EpochHistory(path: leaderStore.history), replicas: 2,
            context: context, endpoint: "tcp://127.0.0.1:*", security: .curveServer(keys["w1"]!, zapDomain: ZAPDomain.replication.rawValue),
            mayAcknowledge: { true })
        defer { leader.stop() }
        func follower(_ name: String) throws -> (TestStore, ReplicationFollower) {
            let store = try TestStore(directory: root.path + "/" + name)
            let link = try ReplicationFollower(
                replica: FollowerReplica(partition: "books.p0", store: store, history: EpochHistory(path: store.history)), epoch: 3,
                context: context, leaderEndpoint: leader.endpoint, security: .curveClient(keys[name]!, serverKey: keys["w1"]!.publicKey))
            return (store, link)
        }
        // The refused ones first: had any been admitted, its `follow` would make the majority of 2.
        var refused: [(name: String, store: TestStore, link: ReplicationFollower)] = []
        defer { for follower in refused { follower.link.stop(); follower.store.close() } }
        for name in ["app", "admin", "phone", "screen", "stranger"] {
            let (store, link) = try follower(name)
            refused.append((name, store, link))
        }
        let (replica, replicaLink) = try follower("w2")
        defer { replicaLink.stop(); replica.close() }
        #expect(leader.waitUntilRecovered(timeout: .hangLimit))
        let replies = Replies()
        for number in 1...50 {
            let pending = try leaderStore.write(number)
            leader.replicate(pending) { ok in replies.withLock { $0[number] = ok } }
        }
        #expect(eventually { replies.withLock { $0.count == 50 && $0.values.allSatisfy { $0 } } })
        #expect(eventually { replica.lastSequence == 50 })
        #expect(replica.bytes == leaderStore.bytes)
        for follower in refused {
            #expect(follower.store.lastSequence == 0, "the \(follower.name) key, not a worker's, got records")
        }
    }
}
