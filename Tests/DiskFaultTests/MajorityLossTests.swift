import Foundation
import LyceumTestSupport
import Testing

/// Two of a partition's three replica processes killed (SIGKILL) while a writer goes on: the
/// leader, alone, acknowledges nothing until a majority returns (its writes are held, and the
/// client retries them under their `request_id`), and it keeps answering reads; once the two
/// return, writes resume and nothing acknowledged is lost or applied twice
/// (protocol/replication.md, *What each side does on every failure*).
@Suite(.serialized) struct MajorityLossTests {
    @Test func twoOfThreeReplicasKilledHoldWritesAnswerReadsAndLoseNothing() throws {
        let cluster = try ReplicaTrio()
        let writer = RetryingWriter(endpoint: cluster.endpoint)
        try #require(eventually { writer.count >= 20 }, "no writes acknowledged\n\(cluster.logs)")
        let leader = try cluster.leader()
        let followers = ReplicaTrio.nodes.filter { $0 != leader }
        for follower in followers { cluster.workers[follower]?.stop() }
        let killedAt = ContinuousClock.now
        // Writes already on their way may still be acknowledged by the followers' last acks;
        // from one second on, with no follower left, none may be.
        let settled = ContinuousClock.now + .seconds(1)
        var read: [String: Any] = [:]
        #expect(eventually {
            read = (try? cluster.call(#"{"op":"list","learner":"ada","limit":5}"#, timeout: .seconds(5))) ?? [:]
            return read.isOK && ContinuousClock.now >= settled + .seconds(3)
        }, "the leader did not answer reads without its followers: \(read)")
        let restartedAt = ContinuousClock.now
        let heldOut = writer.acknowledged.filter { $0.at > settled && $0.at < restartedAt }
        #expect(heldOut.isEmpty, "acknowledged without a majority: \(heldOut.map(\.title))")
        print("two replicas killed: \(writer.acknowledged.filter { $0.at > killedAt && $0.at < restartedAt }.count) writes acknowledged in the \(restartedAt - killedAt) without a majority; reads answered")

        for follower in followers { try cluster.start(follower) }
        let returned = writer.count
        try #require(eventually { writer.count >= returned + 20 }, "writes did not resume once a majority returned\n\(cluster.logs)")
        let resumed = writer.acknowledged.first { $0.at > restartedAt }.map { $0.at - restartedAt }
        print("writes resumed \(resumed.map { "\($0)" } ?? "?") after the two replicas were started again")
        try writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged.map(\.title))
    }
}
