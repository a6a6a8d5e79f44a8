import Journal
import LyceumTestSupport
import Replication
import Testing
import ZeroMQ

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

    /// Runs `body` with a follower over a fresh store, having adopted epoch 5, and removes both after.
    static func withFollower(_ body: (FollowerReplica, TestStore) throws -> Void) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try TestStore(directory: directory.path)
        defer { store.close() }
        let replica = FollowerReplica(partition: partition, store: store, history: try EpochHistory(path: store.history))
        _ = replica.follow(epoch: 5)
        try body(replica, store)
    }

    @Test func appendsOfOneBatchShareOneSyncAndOneAck() throws {
        try Self.withFollower { replica, store in
            let records = try Self.records(9)
            let syncs = store.journal.statistics.syncs
            let answers = replica.handle([Self.append(records[0..<3]), Self.append(records[3..<4]), Self.append(records[4..<9])])
            #expect(answers == [.ack(partition: Self.partition, epoch: 5, durable: 9)])
            #expect(store.journal.statistics.syncs == syncs + 1, "one fdatasync for the batch")
            #expect(store.lastSequence == 9)
        }
    }

    @Test func aRefusalFollowsTheAckOfWhatWasWrittenBeforeIt() throws {
        try Self.withFollower { replica, store in
            let records = try Self.records(6)
            // Records 5–6 do not follow 2: a gap, refused; 3–4 after it follow again.
            let answers = replica.handle([Self.append(records[0..<2]), Self.append(records[4..<6]), Self.append(records[2..<4])])
            #expect(answers == [
                .ack(partition: Self.partition, epoch: 5, durable: 2),
                .refuse(partition: Self.partition, epoch: 5, reason: .gap, position: LogPosition(epoch: 5, sequence: 2)),
                .ack(partition: Self.partition, epoch: 5, durable: 4),
            ])
        }
    }

    @Test func anOlderEpochIsFencedInsideABatch() throws {
        try Self.withFollower { replica, store in
            let records = try Self.records(3)
            let answers = replica.handle([Self.append(records[0..<2]), Self.append(records[2..<3], epoch: 4)])
            #expect(answers == [
                .ack(partition: Self.partition, epoch: 5, durable: 2),
                .refuse(partition: Self.partition, epoch: 5, reason: .staleEpoch, position: LogPosition(epoch: 5, sequence: 2)),
            ])
            #expect(store.lastSequence == 2, "nothing of the older epoch is written")
        }
    }

    @Test func aTruncationIsAnsweredAfterTheAppendsBeforeIt() throws {
        try Self.withFollower { replica, store in
            let records = try Self.records(4)
            let answers = replica.handle([Self.append(records[0..<4]), .truncate(partition: Self.partition, epoch: 5, after: 2)])
            #expect(answers == [
                .ack(partition: Self.partition, epoch: 5, durable: 4),
                .follow(partition: Self.partition, epoch: 5, position: LogPosition(epoch: 5, sequence: 2), node: ""),
            ])
            #expect(store.lastSequence == 2)
        }
    }

    @Test func heartbeatsAloneAreAnsweredOnceWithoutASync() throws {
        try Self.withFollower { replica, store in
            let records = try Self.records(2)
            _ = replica.handle([Self.append(records[0..<2])])
            let syncs = store.journal.statistics.syncs
            let heartbeat = ReplicationMessage.append(
                partition: Self.partition, epoch: 5, previous: LogPosition(epoch: 5, sequence: 2), commit: 2, epochs: [], records: [])
            #expect(replica.handle([heartbeat, heartbeat]) == [.ack(partition: Self.partition, epoch: 5, durable: 2)])
            #expect(store.journal.statistics.syncs == syncs, "nothing new to sync")
        }
    }

    @Test func appendsLeftUnacknowledgedAreSyncedBeforeAnyPositionIsNamed() throws {
        try Self.withFollower { replica, store in
            let records = try Self.records(4)
            let syncs = store.journal.statistics.syncs
            let (answers, unacknowledged) = replica.answer([Self.append(records[0..<2]), Self.append(records[2..<4])])
            #expect(answers.isEmpty, "the link acknowledges once durable")
            #expect(unacknowledged?.ack == .ack(partition: Self.partition, epoch: 5, durable: 4))
            #expect(store.journal.statistics.syncs == syncs, "nothing waited for the sync")
            // A `follow` names the log's end, which the leader counts as durable: synced first.
            #expect(replica.follow(epoch: 5) == .follow(partition: Self.partition, epoch: 5, position: LogPosition(epoch: 5, sequence: 4)))
            #expect(store.journal.statistics.syncs == syncs + 1)
        }
    }

    @Test func aCutLogIsANewGeneration() throws {
        try Self.withFollower { replica, store in
            let records = try Self.records(4)
            let (_, written) = replica.answer([Self.append(records[0..<4])])
            #expect(written?.generation == replica.generation)
            _ = replica.handle([.truncate(partition: Self.partition, epoch: 5, after: 2)])
            #expect(store.lastSequence == 2)
            #expect(written.map { $0.generation != replica.generation } == true, "its ack would speak for records cut since")
        }
    }
}

/// A replica whose epoch history outlived records its journal lost (a power loss under
/// `interval` or `none`, or a leader that recorded its epoch and wrote nothing) keeps
/// replicating: the starts past its log's end are forgotten before the leader's are recorded,
/// instead of refusing every append with `storage` forever (issue 36's stuck partitions).
@Suite struct UnwrittenEpochTests {
    @Test func aFollowerForgetsStartsPastItsLogAndTakesTheLeadersOlderEpochs() throws {
        try FollowerBatchTests.withFollower { replica, store in
            let records = try FollowerBatchTests.records(4)
            #expect(replica.handle([FollowerBatchTests.append(records[0..<2])]) == [.ack(partition: FollowerBatchTests.partition, epoch: 5, durable: 2)])
            // What a power loss leaves: epoch 87 started at record 50, which the journal lost.
            try replica.history.record(EpochHistory.Start(epoch: 87, startSequence: 50))
            // The leader of epoch 90 ships records 3–4, written in epoch 6.
            let append = ReplicationMessage.append(
                partition: FollowerBatchTests.partition, epoch: 90, previous: LogPosition(epoch: 5, sequence: 2), commit: 2,
                epochs: [EpochHistory.Start(epoch: 6, startSequence: 3)], records: Array(records[2..<4]))
            #expect(replica.handle([append]) == [.ack(partition: FollowerBatchTests.partition, epoch: 90, durable: 4)])
            #expect(replica.history.starts == [EpochHistory.Start(epoch: 5, startSequence: 1), EpochHistory.Start(epoch: 6, startSequence: 3)])
            #expect(replica.history.adopted == 90, "adoption is never forgotten")
            #expect(try EpochHistory(path: store.history).starts == replica.history.starts, "the history file says the same")
        }
    }

    @Test func aLeaderForgetsStartsPastItsLogBeforeRecordingItsOwn() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try TestStore(directory: directory.path)
        defer { store.close() }
        for number in 1...2 { _ = try store.write(number) }
        let history = try EpochHistory(path: store.history)
        try history.record(EpochHistory.Start(epoch: 5, startSequence: 1))
        // Epoch 7 recorded its start and wrote nothing before its leader lost the lease.
        try history.record(EpochHistory.Start(epoch: 7, startSequence: 3))
        try history.record(EpochHistory.Start(epoch: 87, startSequence: 50))
        let context = try Context()
        let leader = try ReplicationLeader(
            partition: FollowerBatchTests.partition, epoch: 90, store: store, history: history, replicas: 1,
            context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }
        #expect(leader.waitUntilRecovered(timeout: .hangLimit))
        #expect(try EpochHistory(path: store.history).starts == [EpochHistory.Start(epoch: 5, startSequence: 1), EpochHistory.Start(epoch: 90, startSequence: 3)])
    }
}
