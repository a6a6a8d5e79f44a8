import Journal
import LyceumTestSupport
import Replication
import Testing

/// A follower handed everything its leader sent since it last looked, without sockets: the
/// batch's appends share one fdatasync and one cumulative ack, and whatever else the batch holds
/// is answered in order, after the appends before it are acknowledged (never before: an answer
/// never speaks for records written after it).
@Suite struct FollowerBatchTests {
    static let partition = "books.p0"

    /// Records 1…`count`, as a leader of epoch 5 ships them.
    static func records(_ count: Int) throws -> [ReplicatedRecord] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let leader = try TestStore(directory: directory.path)
        defer { leader.close() }
        for number in 1...count { _ = try leader.write(number) }
        return try JournalTail(journal: leader.journal, after: 0).next(maxBytes: 1 << 20)
    }

    /// The leader's append of `records` (sequences `first`… of epoch 5, which started at 1).
    static func append(_ records: ArraySlice<ReplicatedRecord>, epoch: Int64 = 5) -> ReplicationMessage {
        let previous = records.first!.sequence - 1
        return .append(
            partition: partition, epoch: epoch, previous: LogPosition(epoch: previous == 0 ? 0 : 5, sequence: previous), commit: 0,
            epochs: previous == 0 ? [EpochHistory.Start(epoch: 5, startSequence: 1)] : [], records: Array(records))
    }

    /// A follower over a fresh store in `directory`, having adopted epoch 5.
    static func follower(in directory: TemporaryDirectory) throws -> (FollowerReplica, TestStore) {
        let store = try TestStore(directory: directory.path)
        let replica = FollowerReplica(partition: partition, store: store, history: try EpochHistory(path: store.history))
        _ = replica.follow(epoch: 5)
        return (replica, store)
    }

    @Test func appendsOfOneBatchShareOneSyncAndOneAck() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (replica, store) = try Self.follower(in: directory)
        defer { store.close() }
        let records = try Self.records(9)
        let syncs = store.journal.statistics.syncs
        let answers = replica.handle([Self.append(records[0..<3]), Self.append(records[3..<4]), Self.append(records[4..<9])])
        #expect(answers == [.ack(partition: Self.partition, epoch: 5, durable: 9)])
        #expect(store.journal.statistics.syncs == syncs + 1, "one fdatasync for the batch")
        #expect(store.lastSequence == 9)
    }

    @Test func aRefusalFollowsTheAckOfWhatWasWrittenBeforeIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (replica, store) = try Self.follower(in: directory)
        defer { store.close() }
        let records = try Self.records(6)
        // Records 5–6 do not follow 2: a gap, refused; 3–4 after it follow again.
        let answers = replica.handle([Self.append(records[0..<2]), Self.append(records[4..<6]), Self.append(records[2..<4])])
        #expect(answers == [
            .ack(partition: Self.partition, epoch: 5, durable: 2),
            .refuse(partition: Self.partition, epoch: 5, reason: .gap, position: LogPosition(epoch: 5, sequence: 2)),
            .ack(partition: Self.partition, epoch: 5, durable: 4),
        ])
    }

    @Test func anOlderEpochIsFencedInsideABatch() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (replica, store) = try Self.follower(in: directory)
        defer { store.close() }
        let records = try Self.records(3)
        let answers = replica.handle([Self.append(records[0..<2]), Self.append(records[2..<3], epoch: 4)])
        #expect(answers == [
            .ack(partition: Self.partition, epoch: 5, durable: 2),
            .refuse(partition: Self.partition, epoch: 5, reason: .staleEpoch, position: LogPosition(epoch: 5, sequence: 2)),
        ])
        #expect(store.lastSequence == 2, "nothing of the older epoch is written")
    }

    @Test func aTruncationIsAnsweredAfterTheAppendsBeforeIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (replica, store) = try Self.follower(in: directory)
        defer { store.close() }
        let records = try Self.records(4)
        let answers = replica.handle([Self.append(records[0..<4]), .truncate(partition: Self.partition, epoch: 5, after: 2)])
        #expect(answers == [
            .ack(partition: Self.partition, epoch: 5, durable: 4),
            .follow(partition: Self.partition, epoch: 5, position: LogPosition(epoch: 5, sequence: 2), node: ""),
        ])
        #expect(store.lastSequence == 2)
    }

    @Test func heartbeatsAloneAreAnsweredOnceWithoutASync() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (replica, store) = try Self.follower(in: directory)
        defer { store.close() }
        let records = try Self.records(2)
        _ = replica.handle([Self.append(records[0..<2])])
        let syncs = store.journal.statistics.syncs
        let heartbeat = ReplicationMessage.append(
            partition: Self.partition, epoch: 5, previous: LogPosition(epoch: 5, sequence: 2), commit: 2, epochs: [], records: [])
        #expect(replica.handle([heartbeat, heartbeat]) == [.ack(partition: Self.partition, epoch: 5, durable: 2)])
        #expect(store.journal.statistics.syncs == syncs, "nothing new to sync")
    }
}
