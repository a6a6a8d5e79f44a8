import Foundation
import Journal
import LyceumLifecycle
import LyceumTestSupport
import Replication
import Security
import Testing
import ZeroMQ

/// The replication channel over CURVE, as in production: the leader's ROUTER is a CURVE server
/// whose ZAP handler admits only the replicas' keys; a follower with another key gets nothing.
@Suite(.serialized, .offTheCooperativePool) struct CurveLinkTests {
    @Test func onlyAdmittedKeysReplicateAndTheRecordsArriveWhole() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let leaderKeys = try CurveKeyPair.generate()
        let replicaKeys = try CurveKeyPair.generate()
        let strangerKeys = try CurveKeyPair.generate()
        let admitted = try Z85.encode(replicaKeys.publicKey)
        let handler = try ZAPHandler(context: context) { request in
            guard request.domain == "lyceum.replication", let key = request.curvePublicKey, let text = try? Z85.encode(key), text == admitted else {
                return .deny(reason: "not a replica's key")
            }
            return .allow(userID: text)
        }
        let zap = ComponentThread(handler, name: "test-zap")
        defer { _ = zap.stop() }
        try handler.waitUntilReady(timeout: .hangLimit)

        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 3, store: leaderStore, history: EpochHistory(path: leaderStore.history), replicas: 2,
            context: context, endpoint: "tcp://127.0.0.1:*", security: .curveServer(leaderKeys, zapDomain: "lyceum.replication"),
            mayAcknowledge: { true })
        defer { leader.stop() }
        func follower(_ name: String, keys: CurveKeyPair) throws -> (TestStore, ReplicationFollower) {
            let store = try TestStore(directory: root.path + "/" + name)
            let link = try ReplicationFollower(
                replica: FollowerReplica(partition: "books.p0", store: store, history: EpochHistory(path: store.history)), epoch: 3,
                context: context, leaderEndpoint: leader.endpoint, security: .curveClient(keys, serverKey: leaderKeys.publicKey))
            return (store, link)
        }
        let (stranger, strangerLink) = try follower("w9", keys: strangerKeys)
        defer { strangerLink.stop(); stranger.close() }
        let (replica, replicaLink) = try follower("w2", keys: replicaKeys)
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
        #expect(stranger.lastSequence == 0, "a key the ZAP handler refuses got records")
    }
}
