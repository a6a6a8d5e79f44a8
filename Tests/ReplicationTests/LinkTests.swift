import Foundation
import Journal
import LyceumTestSupport
import Replication
import Synchronization
import Testing
import ZeroMQ

/// A leader and its followers over real ZeroMQ connections on loopback, with real journals
/// under `durability always`: records arrive byte for byte, writes are acknowledged by a
/// majority only, a late follower catches up, a divergent one is cut back, and an older epoch
/// is fenced off.
/// The outcome of each write's reply, by book number, as they come.
final class Replies: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [Int: Bool] = [:]
    func withLock<T>(_ body: (inout [Int: Bool]) -> T) -> T { lock.withLock { body(&outcomes) } }
}

@Suite(.serialized, .offTheCooperativePool) struct LinkTests {
    static let hang = Duration.hangLimit

    final class Replica {
        let store: TestStore
        let history: EpochHistory
        var follower: ReplicationFollower?
        init(_ directory: String) throws {
            store = try TestStore(directory: directory)
            history = try EpochHistory(path: store.history)
        }
        init(store: TestStore, history: EpochHistory) {
            self.store = store
            self.history = history
        }
        func follow(_ leader: ReplicationLeader, context: Context) throws {
            let replica = FollowerReplica(partition: "books.p0", store: store, history: history)
            follower = try ReplicationFollower(replica: replica, epoch: leader.epoch, context: context, leaderEndpoint: leader.endpoint)
        }
        func stop() {
            follower?.stop()
            follower = nil
        }
    }

    /// Writes `range` at the leader; returns the replies' outcomes, by book number, as they come.
    static func write(_ range: ClosedRange<Int>, leader: ReplicationLeader, store: TestStore, replies: Replies) throws {
        for number in range {
            let pending = try store.write(number)
            leader.replicate(pending) { ok in replies.withLock { $0[number] = ok } }
        }
    }

    @Test func followersGetTheSameBytesAndAMajorityAcknowledges() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 5, store: leaderStore, history: EpochHistory(path: leaderStore.history),
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }
        let second = try Replica(root.path + "/w2")
        let third = try Replica(root.path + "/w3")
        defer { second.stop(); third.stop(); second.store.close(); third.store.close() }
        try second.follow(leader, context: context)
        try third.follow(leader, context: context)
        #expect(leader.waitUntilRecovered(timeout: Self.hang))

        let replies = Replies()
        try Self.write(1...200, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count } == 200 })
        #expect(replies.withLock { $0.values.allSatisfy { $0 } })
        #expect(eventually(timeout: Self.hang) { second.store.lastSequence == 200 && third.store.lastSequence == 200 })
        #expect(second.store.bytes == leaderStore.bytes)
        #expect(third.store.bytes == leaderStore.bytes)
        #expect(second.history.starts == [EpochHistory.Start(epoch: 5, startSequence: 1)])

        // One follower stops: the leader and the other are a majority.
        third.stop()
        try Self.write(201...210, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count } == 210 })
        // Both stop: nothing more is acknowledged…
        second.stop()
        try Self.write(211...211, leader: leader, store: leaderStore, replies: replies)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(replies.withLock { $0[211] } == nil, "acknowledged without a majority")
        // …until one comes back and catches up from where it stopped.
        try third.follow(leader, context: context)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0[211] } == true })
        #expect(eventually(timeout: Self.hang) { third.store.lastSequence == 211 })
        #expect(third.store.bytes == leaderStore.bytes)
    }

    @Test func aNewFollowerCatchesUpFromNothingWhileWritesGoOn() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 2, store: leaderStore, history: EpochHistory(path: leaderStore.history),
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }
        let early = try Replica(root.path + "/w2")
        defer { early.stop(); early.store.close() }
        try early.follow(leader, context: context)
        #expect(leader.waitUntilRecovered(timeout: Self.hang))
        let replies = Replies()
        try Self.write(1...3000, leader: leader, store: leaderStore, replies: replies)
        // A third replica, empty, joins while writes go on, and catches up from nothing.
        let late = try Replica(root.path + "/w3")
        defer { late.stop(); late.store.close() }
        try late.follow(leader, context: context)
        try Self.write(3001...3500, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count } == 3500 })
        #expect(replies.withLock { $0.values.allSatisfy { $0 } })
        #expect(eventually(timeout: Self.hang) { late.store.lastSequence == 3500 })
        #expect(late.store.bytes == leaderStore.bytes)
        #expect(late.store.state.snapshot() == leaderStore.state.snapshot())
    }

    @Test func aNewLeaderBehindTheMajorityFetchesWhatItLacksBeforeLeading() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        // Epoch 3's leader (gone now) had 1…3000 acknowledged by w2; w1 has only 1…6.
        let ahead = try TestStore(directory: root.path + "/w2")
        let aheadHistory = try EpochHistory(path: ahead.history)
        try aheadHistory.record(EpochHistory.Start(epoch: 3, startSequence: 1))
        for number in 1...3000 { _ = try ahead.write(number) }
        let behind = try TestStore(directory: root.path + "/w1")
        defer { behind.close() }
        let behindHistory = try EpochHistory(path: behind.history)
        try behindHistory.record(EpochHistory.Start(epoch: 3, startSequence: 1))
        for record in try JournalTail(journal: ahead.journal, after: 0).next(maxBytes: 1 << 20).prefix(6) { _ = try behind.append(record) }
        // w1 wins epoch 9: with w2 it is a majority of 3, and takes 7…3000 from it (three fetches) before leading.
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 9, store: behind, history: behindHistory,
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }
        #expect(!leader.isRecovered)
        let follower = Replica(store: ahead, history: aheadHistory)
        defer { follower.stop(); ahead.close() }
        try follower.follow(leader, context: context)
        #expect(leader.waitUntilRecovered(timeout: Self.hang))
        #expect(behind.lastSequence == 3000, "every record the majority had is in the new leader's log")
        #expect(behindHistory.starts == [EpochHistory.Start(epoch: 3, startSequence: 1), EpochHistory.Start(epoch: 9, startSequence: 3001)])
        let replies = Replies()
        try Self.write(3001...3002, leader: leader, store: behind, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count == 2 && $0.values.allSatisfy { $0 } } })
        #expect(eventually(timeout: Self.hang) { ahead.lastSequence == 3002 })
        #expect(ahead.bytes == behind.bytes)
        #expect(behind.state.snapshot() == ahead.state.snapshot())
    }

    @Test func aDivergentTailIsCutAndAnOlderEpochIsFencedOff() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        // w2 led epoch 3 and wrote 1…10; only 1…5 reached w1, which then led epoch 5 and wrote 6…7.
        let oldLeader = try TestStore(directory: root.path + "/w2")
        let oldHistory = try EpochHistory(path: oldLeader.history)
        try oldHistory.record(EpochHistory.Start(epoch: 3, startSequence: 1))
        for number in 1...10 { _ = try oldLeader.write(number) }
        let newStore = try TestStore(directory: root.path + "/w1")
        defer { newStore.close() }
        let newHistory = try EpochHistory(path: newStore.history)
        try newHistory.record(EpochHistory.Start(epoch: 3, startSequence: 1))
        for record in try JournalTail(journal: oldLeader.journal, after: 0).next(maxBytes: 1 << 20).prefix(5) {
            _ = try newStore.append(record)
        }
        try newHistory.record(EpochHistory.Start(epoch: 5, startSequence: 6))
        for number in 56...57 { _ = try newStore.write(number) }
        // w1 now leads epoch 8; w2 comes back and follows: w1's (5:7) is greater than w2's (3:10),
        // so w1 recovers with its own log, and w2's 6…10 of epoch 3 are cut.
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 8, store: newStore, history: newHistory,
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }
        let returning = Replica(store: oldLeader, history: oldHistory)
        defer { returning.stop(); oldLeader.close() }
        try returning.follow(leader, context: context)
        #expect(leader.waitUntilRecovered(timeout: Self.hang))
        let replies = Replies()
        try Self.write(108...109, leader: leader, store: newStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count } == 2 })
        #expect(eventually(timeout: Self.hang) { oldLeader.bytes == newStore.bytes })
        #expect(oldLeader.lastSequence == 9)
        #expect(oldHistory.starts.map(\.epoch) == [3, 5, 8])

        // A leader of an older epoch (3) is refused by that follower, learns it is deposed, and
        // acknowledges nothing.
        returning.stop()
        let deposed = Mutex<Int64?>(nil)
        let staleStore = try TestStore(directory: root.path + "/w3")
        defer { staleStore.close() }
        let stale = try ReplicationLeader(
            partition: "books.p0", epoch: 3, store: staleStore, history: EpochHistory(path: staleStore.history),
            replicas: 2, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true },
            onDeposed: { newer in deposed.withLock { $0 = newer } })
        defer { stale.stop() }
        let staleReplies = Replies()
        try Self.write(1...1, leader: stale, store: staleStore, replies: staleReplies)
        try returning.follow(stale, context: context)
        #expect(eventually(timeout: Self.hang) { deposed.withLock { $0 } == 8 })
        #expect(eventually(timeout: Self.hang) { staleReplies.withLock { $0[1] } == false })
        #expect(!stale.isRecovered)
        #expect(oldLeader.bytes == newStore.bytes, "the fenced leader wrote nothing at the follower")
    }
}

