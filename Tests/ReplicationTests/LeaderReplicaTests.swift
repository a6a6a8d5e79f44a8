import Journal
import LyceumTestSupport
import Replication
import Synchronization
import Testing

/// The leader's state machine without sockets: each test puts a ``LeaderReplica`` in a state
/// (recovering, leading, deposed), gives it one event, and checks the messages it returns, its
/// effects, and what the quorum counts.
@Suite struct LeaderReplicaTests {
    static let partition = "books.p0"
    /// Two followers' connections.
    static let a: [UInt8] = [0xA]
    static let b: [UInt8] = [0xB]
    /// The leadership's epoch; the records before it were written in epoch 5.
    static let epoch: Int64 = 7

    /// A leader of epoch 7 over a store holding records 1…`written` of epoch 5, its own
    /// directory removed after `body`.
    final class Fixture {
        let directory: TemporaryDirectory
        let store: TestStore
        let history: EpochHistory
        let quorum: QuorumTracker
        let leader: LeaderReplica
        let start = ContinuousClock.now

        init(written: Int, limits: LeaderReplica.Limits = LeaderReplica.Limits()) throws {
            directory = try TemporaryDirectory()
            store = try TestStore(directory: directory.path)
            history = try EpochHistory(path: store.history)
            if written > 0 {
                try history.record(EpochHistory.Start(epoch: 5, startSequence: 1))
                for number in 1...written { _ = try store.write(number) }
            }
            quorum = QuorumTracker(replicas: 3, mayAcknowledge: { true })
            leader = LeaderReplica(partition: LeaderReplicaTests.partition, epoch: LeaderReplicaTests.epoch, store: store, history: history, quorum: quorum, limits: limits)
        }

        deinit {
            store.close()
            directory.remove()
        }

        /// `message` from `identity`, at `seconds` after the fixture was made.
        @discardableResult
        func receive(_ message: ReplicationMessage, from identity: [UInt8], at seconds: Double = 0) throws -> LeaderReplica.Output {
            try leader.step(.message(message, from: identity), at: start + .seconds(seconds))
        }

        @discardableResult
        func pass(at seconds: Double = 0) throws -> LeaderReplica.Output { try leader.step(.pass, at: start + .seconds(seconds)) }

        @discardableResult
        func ship(heartbeat: Bool = false) throws -> LeaderReplica.Output { try leader.step(.ship(heartbeat: heartbeat)) }

        /// Writes records `from`…`through` as the leader (its own copy counted durable).
        func write(_ from: Int, through: Int) throws {
            for number in from...through { _ = try store.write(number) }
            quorum.update("leader", durable: store.lastSequence)
        }

        /// Recovered with follower `a` at `position` (a majority with the leader): leading.
        func lead(followerAt position: LogPosition) throws {
            try receive(follow(position), from: a)
            let output = try pass()
            #expect(output.effects == [.recovered])
            #expect(leader.phase == .leading)
        }
    }

    static func follow(_ position: LogPosition, epoch: Int64 = epoch, node: String = "w2") -> ReplicationMessage {
        .follow(partition: partition, epoch: epoch, position: position, node: node)
    }

    static func ack(_ durable: UInt64, epoch: Int64 = epoch) -> ReplicationMessage {
        .ack(partition: partition, epoch: epoch, durable: durable)
    }

    /// The sequences of the appends among `output`'s messages, each as first…last (empty: a heartbeat).
    static func appended(_ output: LeaderReplica.Output) -> [ClosedRange<UInt64>?] {
        output.messages.compactMap { outgoing in
            guard case .append(_, _, _, _, _, let records) = outgoing.message else { return nil }
            guard let first = records.first, let last = records.last else { return .some(nil) }
            return first.sequence...last.sequence
        }
    }

    // MARK: Every message in every state

    /// Messages a leader never acts on in a state: each leaves it where it was, sends nothing,
    /// and changes nothing the quorum counts.
    @Test(arguments: ["recovering", "leading", "deposed"])
    func messagesALeaderDoesNotTakeChangeNothing(state: String) throws {
        let fixture = try Fixture(written: 4)
        switch state {
        case "leading": try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 4))
        case "deposed": try fixture.receive(Self.follow(LogPosition(epoch: 5, sequence: 4), epoch: 9), from: Self.b)
        default: break
        }
        let phase = fixture.leader.phase
        let committed = fixture.quorum.committed
        let records = try FollowerBatchTests.records(2)
        var ignored: [ReplicationMessage] = [
            .append(partition: Self.partition, epoch: 9, previous: LogPosition(epoch: 5, sequence: 0), commit: 9, epochs: [], records: records),
            .truncate(partition: Self.partition, epoch: 9, after: 0),
            .fetch(partition: Self.partition, epoch: 9, position: LogPosition(epoch: 5, sequence: 0)),
            Self.ack(4, epoch: 6),
            .snapshotFetch(partition: Self.partition, epoch: Self.epoch, offset: 0, maxBytes: 1024),
        ]
        if state != "recovering" {
            // Only a recovering leader takes records and images, and only from its source.
            ignored.append(.records(partition: Self.partition, epoch: Self.epoch, after: 4, end: LogPosition(epoch: 5, sequence: 6), epochs: [], records: records))
            ignored.append(.snapshot(partition: Self.partition, epoch: Self.epoch, offset: 0, size: 3, end: LogPosition(epoch: 5, sequence: 6), epochs: [], crc: nil, bytes: [1, 2, 3]))
        }
        if state == "recovering" {
            ignored.append(Self.ack(4))  // nothing was shipped yet
        }
        if state == "deposed" {
            ignored += [Self.follow(LogPosition(epoch: 5, sequence: 4)), Self.ack(4), Self.follow(LogPosition(epoch: 5, sequence: 4), epoch: 11)]
        }
        for message in ignored {
            let output = try fixture.receive(message, from: Self.a)
            #expect(output == LeaderReplica.Output(), "\(state): \(message)")
            #expect(fixture.leader.phase == phase, "\(state): \(message)")
            #expect(fixture.quorum.committed == committed, "\(state): \(message)")
            #expect(fixture.store.lastSequence == 4)
        }
    }

    @Test func aDeposedLeaderSendsNothingMore() throws {
        let fixture = try Fixture(written: 4)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 2))
        let deposed = try fixture.receive(.refuse(partition: Self.partition, epoch: 8, reason: .staleEpoch, position: LogPosition(epoch: 5, sequence: 2)), from: Self.a)
        #expect(deposed == LeaderReplica.Output(effects: [.deposed(by: 8)]))
        #expect(fixture.leader.phase == .deposed(by: 8))
        try fixture.write(5, through: 6)
        #expect(try fixture.ship(heartbeat: true) == LeaderReplica.Output())
        #expect(try fixture.pass() == LeaderReplica.Output())
        // The writes waiting for a majority are failed: the quorum ended.
        let answer = Mutex<Bool?>(nil)
        fixture.quorum.whenCommitted(6) { acknowledged in answer.withLock { $0 = acknowledged } }
        #expect(answer.withLock { $0 } == false)
    }

    // MARK: Recovering

    @Test func recoveryWaitsForAMajorityOfTheEpoch() throws {
        let fixture = try Fixture(written: 4)
        #expect(try fixture.pass() == LeaderReplica.Output(), "the leader alone is no majority of 3")
        // A follower that has not adopted this epoch yet does not count.
        try fixture.receive(Self.follow(LogPosition(epoch: 5, sequence: 4), epoch: 6), from: Self.a)
        #expect(try fixture.pass() == LeaderReplica.Output())
        #expect(fixture.leader.phase == .recovering)
        try fixture.receive(Self.follow(LogPosition(epoch: 5, sequence: 3)), from: Self.a)
        let output = try fixture.pass()
        #expect(output.effects == [.recovered])
        #expect(fixture.history.starts.last == EpochHistory.Start(epoch: Self.epoch, startSequence: 5), "its epoch starts after its log")
        #expect(fixture.quorum.committed == 3, "the follower's position counts at once")
        #expect(Self.appended(try fixture.ship()) == [4...4], "the follower gets what it lacks")
    }

    @Test func aNewerEpochDeposesARecoveringLeader() throws {
        let fixture = try Fixture(written: 4)
        let output = try fixture.receive(Self.follow(LogPosition(epoch: 5, sequence: 4), epoch: 8), from: Self.a)
        #expect(output.effects == [.deposed(by: 8)])
        #expect(try fixture.pass() == LeaderReplica.Output())
    }

    @Test func aLongerLogIsFetchedFromItsHolderAndAskedAgainAfterSilence() throws {
        let fixture = try Fixture(written: 2)
        try fixture.receive(Self.follow(LogPosition(epoch: 5, sequence: 4)), from: Self.a)
        let fetch = ReplicationMessage.fetch(partition: Self.partition, epoch: Self.epoch, position: LogPosition(epoch: 5, sequence: 2))
        #expect(try fixture.pass() == LeaderReplica.Output(messages: [.init(to: Self.a, fetch)]))
        #expect(try fixture.pass(at: 0.5) == LeaderReplica.Output(), "a fetch in flight is not asked twice")
        #expect(try fixture.pass(at: 1.5) == LeaderReplica.Output(messages: [.init(to: Self.a, fetch)]), "asked again after a second of silence")
        // Records from another follower than the source are not taken.
        let records = Array(try FollowerBatchTests.records(4)[2...])
        let answer = ReplicationMessage.records(partition: Self.partition, epoch: Self.epoch, after: 2, end: LogPosition(epoch: 5, sequence: 4), epochs: [], records: records)
        try fixture.receive(answer, from: Self.b)
        #expect(fixture.store.lastSequence == 2)
        try fixture.receive(answer, from: Self.a)
        #expect(fixture.store.lastSequence == 4)
        #expect(try fixture.pass(at: 1.6).effects == [.recovered], "its log now holds the majority's greatest")
        #expect(fixture.history.starts.last == EpochHistory.Start(epoch: Self.epoch, startSequence: 5))
    }

    @Test func recoveryCutsWhatTheMajorityDoesNotHave() throws {
        let fixture = try Fixture(written: 4)
        // The follower's log went on in epoch 6 after record 2, which our epoch-5 records 3–4 never reached.
        try fixture.receive(Self.follow(LogPosition(epoch: 6, sequence: 3)), from: Self.a)
        _ = try fixture.pass()
        let theirs = try FollowerBatchTests.records(3)
        let answer = ReplicationMessage.records(
            partition: Self.partition, epoch: Self.epoch, after: 2, end: LogPosition(epoch: 6, sequence: 3),
            epochs: [EpochHistory.Start(epoch: 6, startSequence: 3)], records: [theirs[2]])
        try fixture.receive(answer, from: Self.a)
        #expect(fixture.store.lastSequence == 3)
        #expect(fixture.history.epoch(of: 3) == 6)
        #expect(try fixture.pass().effects == [.recovered])
    }

    // MARK: Leading

    @Test func aFollowerGetsWhatItLacksAndItsAckCounts() throws {
        let fixture = try Fixture(written: 4)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 4))
        try fixture.write(5, through: 8)
        let output = try fixture.ship()
        #expect(Self.appended(output) == [5...8])
        guard case .append(_, let epoch, let previous, _, let starts, _) = output.messages.first?.message else {
            Issue.record("no append")
            return
        }
        #expect(epoch == Self.epoch)
        #expect(previous == LogPosition(epoch: 5, sequence: 4))
        #expect(starts == [EpochHistory.Start(epoch: Self.epoch, startSequence: 5)], "the epoch's start rides with its first record")
        #expect(fixture.quorum.committed == 4)
        try fixture.receive(Self.ack(8), from: Self.a)
        #expect(fixture.quorum.committed == 8)
        // Its next append carries the commit.
        try fixture.write(9, through: 9)
        guard case .append(_, _, _, let commit, _, _) = try fixture.ship().messages.first?.message else {
            Issue.record("no append")
            return
        }
        #expect(commit == 8)
    }

    @Test func anAckForAPositionNeverSentIsNotCounted() throws {
        let fixture = try Fixture(written: 4)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 4))
        try fixture.write(5, through: 8)
        _ = try fixture.ship()  // 5…8 sent
        try fixture.write(9, through: 10)  // not sent yet
        try fixture.receive(Self.ack(10), from: Self.a)
        #expect(fixture.quorum.committed == 4, "records 9–10 were never sent to it")
        try fixture.receive(Self.ack(6), from: Self.a)
        #expect(fixture.quorum.committed == 6)
        // A duplicate or older ack moves nothing back.
        try fixture.receive(Self.ack(5), from: Self.a)
        try fixture.receive(Self.ack(6), from: Self.a)
        #expect(fixture.quorum.committed == 6)
        // An ack from a connection that never said `follow` counts for nobody.
        try fixture.receive(Self.ack(8), from: Self.b)
        #expect(fixture.quorum.committed == 6)
    }

    @Test func aFollowerWhoseLogDivergesIsToldToCutUntilTheLogsMeet() throws {
        let fixture = try Fixture(written: 4)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 4))
        // A log longer than ours in an epoch we wrote is cut at our end of that epoch.
        let longer = try fixture.receive(Self.follow(LogPosition(epoch: 5, sequence: 9), node: "w3"), from: Self.b)
        #expect(longer.messages == [.init(to: Self.b, .truncate(partition: Self.partition, epoch: Self.epoch, after: 4))])
        // B led epoch 6 from record 3 on (never acknowledged: we recovered without it). Our history
        // has no epoch 6, so where it started in B's log is unknown here: its last record goes.
        let unknown = try fixture.receive(Self.follow(LogPosition(epoch: 6, sequence: 3), node: "w3"), from: Self.b)
        #expect(unknown.messages == [.init(to: Self.b, .truncate(partition: Self.partition, epoch: Self.epoch, after: 2))])
        // Cut after 2, B's log ends in epoch 5 where ours has it: it is followed from there.
        #expect(try fixture.receive(Self.follow(LogPosition(epoch: 5, sequence: 2), node: "w3"), from: Self.b) == LeaderReplica.Output())
        #expect(Self.appended(try fixture.ship()).contains(3...4))
    }

    @Test func aGapIsResentFromTheFollowersPosition() throws {
        let fixture = try Fixture(written: 4)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 4))
        try fixture.write(5, through: 8)
        #expect(Self.appended(try fixture.ship()) == [5...8])
        // The follower lost the append (a truncated batch): it refuses the next one as a gap at 4.
        try fixture.write(9, through: 9)
        #expect(Self.appended(try fixture.ship()) == [9...9])
        try fixture.receive(.refuse(partition: Self.partition, epoch: Self.epoch, reason: .gap, position: LogPosition(epoch: 5, sequence: 4)), from: Self.a)
        #expect(Self.appended(try fixture.ship()) == [5...9], "everything after its position again")
    }

    @Test func heartbeatsAreEmptyAppendsOnlyWhenAsked() throws {
        let fixture = try Fixture(written: 4)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 4))
        #expect(try fixture.ship() == LeaderReplica.Output())
        #expect(Self.appended(try fixture.ship(heartbeat: true)) == [nil])
    }

    @Test func aBatchOverTheByteBoundIsSplitAndTheWindowHoldsTheRest() throws {
        let line = try recordLine(1).count
        var limits = LeaderReplica.Limits()
        limits.appendBytes = 2 * line + line / 2  // two records per append
        limits.windowBytes = 4 * line  // two appends in flight
        let fixture = try Fixture(written: 1, limits: limits)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 1))
        try fixture.write(2, through: 9)
        #expect(Self.appended(try fixture.ship()) == [2...3, 4...5], "split at the byte bound, stopped at the window")
        #expect(try fixture.ship() == LeaderReplica.Output(), "the window is full")
        try fixture.receive(Self.ack(3), from: Self.a)
        #expect(Self.appended(try fixture.ship()) == [6...7])
        try fixture.receive(Self.ack(7), from: Self.a)
        #expect(Self.appended(try fixture.ship()) == [8...9])
    }

    @Test func aRestartedNodeOnANewConnectionReplacesItsOldOne() throws {
        let fixture = try Fixture(written: 4)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 4))
        try fixture.write(5, through: 6)
        // w2 restarted: the same node on connection B, at 4 again.
        try fixture.receive(Self.follow(LogPosition(epoch: 5, sequence: 4)), from: Self.b)
        let output = try fixture.ship()
        #expect(output.messages.map(\.to) == [Self.b], "the old connection gets nothing more")
        #expect(fixture.leader.progress().map(\.node) == ["w2"])
    }

    // MARK: A leader and a follower, messages passed by hand

    @Test func aFollowerThatLedAnUnacknowledgedEpochConvergesOnTheLeadersLog() throws {
        let fixture = try Fixture(written: 4)
        try fixture.lead(followerAt: LogPosition(epoch: 5, sequence: 4))
        // w3 led epoch 6 from record 3 on, which no majority ever acknowledged: its record 3
        // differs from ours, and our history has no epoch 6.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try TestStore(directory: directory.path)
        defer { store.close() }
        let history = try EpochHistory(path: store.history)
        try history.record(EpochHistory.Start(epoch: 5, startSequence: 1))
        let records = try FollowerBatchTests.records(3)
        for record in records[0..<2] { _ = try store.append(record) }
        try history.record(EpochHistory.Start(epoch: 6, startSequence: 3))
        _ = try store.append(records[2])
        let follower = FollowerReplica(partition: Self.partition, store: store, history: history, node: "w3")

        var toLeader = [follower.follow(epoch: Self.epoch)]
        var rounds = 0
        while rounds < 10, fixture.leader.progress().first(where: { $0.node == "w3" })?.durable != 4 {
            rounds += 1
            var toFollower: [ReplicationMessage] = []
            for message in toLeader { toFollower += try fixture.receive(message, from: Self.b).messages.map(\.message) }
            toFollower += try fixture.ship().messages.filter { $0.to == Self.b }.map(\.message)
            toLeader = follower.handle(toFollower)
        }
        print("converged after \(rounds) rounds; w3 ends at \(follower.position)")
        #expect(rounds < 10, "the logs never met")
        #expect(follower.position == LogPosition(epoch: 5, sequence: 4))
        #expect(history.starts.map(\.epoch) == [5], "epoch 6's start is gone with its record")
        #expect(Array(store.bytes) == Array(fixture.store.bytes), "the journals are equal")
    }
}
