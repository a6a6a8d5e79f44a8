import Foundation
import Journal
import LearningServices
import LyceumTestSupport
import Replication
import ServiceHosting
import Synchronization
import Testing
import ZeroMQ

/// The services' change log at a replicated partition's leader: a write is durable for the
/// service only once a majority has it and the leadership holds.
@Suite(.serialized, .offTheCooperativePool) struct ReplicatedChangeLogTests {
    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [UInt64: Bool] = [:]
        func set(_ sequence: UInt64, _ ok: Bool) { lock.withLock { results[sequence] = ok } }
        subscript(sequence: UInt64) -> Bool? { lock.withLock { results[sequence] } }
    }

    @Test func aWriteIsDurableForTheServiceOnlyOnAMajorityWhileTheLeadershipHolds() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leading = Atomic<Bool>(true)
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 4, store: leaderStore, history: EpochHistory(path: leaderStore.history),
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { leading.load(ordering: .relaxed) })
        defer { leader.stop() }
        let log = ReplicatedChangeLog(journal: leaderStore.journal, leader: leader)
        let outcomes = Outcomes()
        func write(_ number: Int) throws -> UInt64 {
            let ticket = try log.append([.put("books", key: "b\(number)", value: Array(#"{"id":"b\#(number)"}"#.utf8))])
            log.whenDurable(ticket) { result in outcomes.set(ticket.sequence, (try? result.get()) != nil) }
            return ticket.sequence
        }
        let follower = try TestStore(directory: root.path + "/w2")
        defer { follower.close() }
        let link = try ReplicationFollower(
            replica: FollowerReplica(partition: "books.p0", store: follower, history: EpochHistory(path: follower.history)),
            epoch: 4, context: context, leaderEndpoint: leader.endpoint)
        #expect(leader.waitUntilRecovered(timeout: .hangLimit))
        let first = try write(1)
        #expect(eventually { outcomes[first] == true })
        // The leadership ends (its lease): the next write never counts as durable.
        leading.store(false, ordering: .relaxed)
        let second = try write(2)
        #expect(eventually { outcomes[second] == false })
        link.stop()
    }
}
