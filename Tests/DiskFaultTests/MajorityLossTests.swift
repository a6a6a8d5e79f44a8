import Foundation
import LyceumTestSupport
import Majordomo
import Testing

/// Two of a partition's three replica processes killed (SIGKILL): the leader, alone,
/// acknowledges no write until a majority returns (the write is held, and its client's retry
/// under the same `request_id` is answered once the two are back), and it keeps answering reads
/// with a session free; nothing acknowledged is lost or applied twice
/// (protocol/replication.md, *What each side does on every failure*).
@Suite(.serialized) struct MajorityLossTests {
    @Test func twoOfThreeReplicasKilledHoldWritesAnswerReadsAndLoseNothing() throws {
        let cluster = try ReplicaTrio()
        let writer = RetryingWriter(endpoint: cluster.endpoint)
        try #require(eventually { writer.count >= 20 }, "no writes acknowledged\n\(cluster.logs)")
        try writer.stop()
        let leader = try cluster.leader()
        let followers = ReplicaTrio.nodes.filter { $0 != leader }
        for follower in followers { cluster.workers[follower]?.stop() }

        // A write without a majority: held (in one of the leader's two sessions), never
        // acknowledged while the two are down; the client gives up after its time-out.
        let held = createBook(learner: "ada", title: "held", requestID: "held")
        let reply: [String: Any]? = try? cluster.call(held, timeout: .seconds(5))
        #expect(reply?.isOK != true, "acknowledged without a majority: \(reply ?? [:])")
        // Reads are answered by the leader alone, in its other session.
        var read: [String: Any] = [:]
        var failures: [String] = []
        #expect(eventually(timeout: .seconds(60)) {
            do { read = try cluster.call(#"{"op":"list","learner":"ada","limit":5}"#, timeout: .seconds(5)) } catch {
                failures.append("\(error)")
            }
            return read.isOK
        }, "the leader did not answer reads without its followers: \(read), \(failures.suffix(3))")
        print("two replicas killed: the write held, \(failures.count) reads timed out before one was answered")

        let restarted = ContinuousClock.now
        for follower in followers { try cluster.start(follower) }
        var retried: [String: Any] = [:]
        #expect(eventually {
            retried = (try? cluster.call(held, timeout: .seconds(5))) ?? [:]
            return retried.isOK
        }, "the held write was not acknowledged once a majority returned\n\(cluster.logs)")
        print("the held write acknowledged \(ContinuousClock.now - restarted) after the two replicas were started again")
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged + ["held"])
    }
}
