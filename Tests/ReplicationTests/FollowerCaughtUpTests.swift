import Foundation
import Journal
import LyceumTestSupport
import Replication
import Testing
import ZeroMQ

/// `ReplicationFollower.isCaughtUp`, what a replicating worker's `/readyz` is made of (issue 35):
/// false until the leader is heard, true once the follower's log reaches what the leader
/// committed, false again once the leader has been silent longer than allowed. Real journals and
/// ZeroMQ links on loopback.
@Suite(.serialized, .offTheCooperativePool) struct FollowerCaughtUpTests {
    @Test func aFollowerIsCaughtUpWhileItHasWhatItsLeaderCommittedAndHearsIt() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 3, store: leaderStore, history: EpochHistory(path: leaderStore.history),
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        var leaderStopped = false
        defer { if !leaderStopped { leader.stop() } }

        // A follower of an endpoint where no leader listens has heard nothing: not caught up.
        let orphan = try LinkTests.Replica(root.path + "/w0")
        defer { orphan.stop(); orphan.store.close() }
        orphan.follower = try ReplicationFollower(
            replica: FollowerReplica(partition: "books.p0", store: orphan.store, history: orphan.history), epoch: 3,
            context: context, leaderEndpoint: try freeLoopbackEndpoint())
        #expect(orphan.follower?.isCaughtUp(within: 1024, heardWithin: .seconds(2)) == false)

        let second = try LinkTests.Replica(root.path + "/w2")
        defer { second.stop(); second.store.close() }
        try second.follow(leader, context: context)
        #expect(leader.waitUntilRecovered(timeout: .hangLimit))
        let replies = Replies()
        try LinkTests.write(1...300, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: .hangLimit) { replies.withLock { $0.count } == 300 })
        // Every write committed: the follower has them all, and says so with no lag allowed.
        let follower = try #require(second.follower)
        #expect(eventually(timeout: .hangLimit) { follower.isCaughtUp(within: 0, heardWithin: .seconds(2)) },
                "the follower ends at \(second.store.lastSequence) of 300")
        #expect(second.store.lastSequence == 300)

        // The leader gone silent: no longer caught up once the allowance has passed.
        leader.stop()
        leaderStopped = true
        #expect(eventually(timeout: .hangLimit) { !follower.isCaughtUp(within: 1024, heardWithin: .milliseconds(300)) })
    }
}
