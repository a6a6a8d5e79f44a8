import Foundation
import Journal
import LyceumTestSupport
import Replication
@testable import ServiceHosting
import Testing
import ZeroMQ

/// Replicas behind the leader's snapshot rebuilt from its journal's image (protocol/replication.md,
/// *Rebuilding a replica*), over real ZeroMQ on loopback with real journals under `durability
/// always`: a stopped follower, a wiped one while writes go on, a recovering leader behind its
/// source's snapshot; damaged images refused with nothing installed; an install stopped midway
/// by a crash leaving the old journal or the new one.
@Suite(.serialized, .offTheCooperativePool) struct RebuildTests {
    static let hang = Duration.hangLimit
    typealias Replica = LinkTests.Replica

    /// The journal's bytes after its snapshot (header and parts): its records.
    static func records(_ store: TestStore) -> [UInt8] {
        let bytes = store.bytes
        var lines = 0
        var parts = -1
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            if parts < 0 {
                // The header names its parts: `"parts":N`.
                let header = String(decoding: bytes[..<index], as: UTF8.self)
                parts = header.range(of: #""parts":"#).flatMap { Int(header[$0.upperBound...].prefix { $0.isNumber }) } ?? 0
            }
            lines += 1
            if lines == 1 + parts { return Array(bytes[(index + 1)...]) }
        }
        return []
    }

    @Test func aFollowerStoppedWhileTheLeaderCompactsIsRebuiltWhenItReturns() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leaderHistory = try EpochHistory(path: leaderStore.history)
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 5, store: leaderStore, history: leaderHistory,
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }
        let second = try Replica(root.path + "/w2")
        let third = try Replica(root.path + "/w3")
        defer { second.stop(); third.stop(); second.store.close(); third.store.close() }
        try second.follow(leader, context: context)
        try third.follow(leader, context: context)
        #expect(leader.waitUntilRecovered(timeout: Self.hang))
        let replies = Replies()
        try LinkTests.write(1...300, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { third.store.lastSequence == 300 })

        // The third stops; the leader goes on with the second, then compacts its journal.
        third.stop()
        try LinkTests.write(301...2000, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count } == 2000 })
        try leaderStore.compact()
        #expect(leaderStore.journal.snapshotSequence == 2000)
        try LinkTests.write(2001...2100, leader: leader, store: leaderStore, replies: replies)

        // It returns, behind the snapshot: rebuilt from the image, then it follows.
        try third.follow(leader, context: context)
        #expect(eventually(timeout: Self.hang) { third.store.lastSequence == 2100 })
        #expect(replies.withLock { $0.count == 2100 && $0.values.allSatisfy { $0 } })
        #expect(third.store.journal.snapshotSequence == 2000)
        #expect(third.store.state.snapshot() == leaderStore.state.snapshot())
        #expect(Self.records(third.store) == Self.records(leaderStore))
        #expect(third.store.bytes == leaderStore.bytes)
        #expect(third.history.starts == leaderHistory.starts)
        #expect(!FileManager.default.fileExists(atPath: third.history.stagingDirectory))

        // It counts towards the majority again: with the second gone, writes are acknowledged.
        second.stop()
        try LinkTests.write(2101...2110, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count == 2110 && $0.values.allSatisfy { $0 } } })
        #expect(eventually(timeout: Self.hang) { third.store.bytes == leaderStore.bytes })
    }

    @Test func wipedFollowersAreRebuiltFromACompactedLeaderWhileWritesGoOn() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        // The leader's journal: 100 000 records, compacted at 99 000.
        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leaderHistory = try EpochHistory(path: leaderStore.history)
        try leaderHistory.record(EpochHistory.Start(epoch: 4, startSequence: 1))
        for number in 1...99_000 { _ = try leaderStore.write(number % 20_000) }
        try leaderStore.compact()
        for number in 99_001...100_000 { _ = try leaderStore.write(number) }
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 6, store: leaderStore, history: leaderHistory,
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }

        // An empty second replica: the leader's position is the greatest, so it leads, and the
        // second, behind the snapshot, is rebuilt before it acknowledges anything.
        let second = try Replica(root.path + "/w2")
        defer { second.stop(); second.store.close() }
        var started = ContinuousClock.now
        try second.follow(leader, context: context)
        #expect(leader.waitUntilRecovered(timeout: Self.hang))
        #expect(eventually(timeout: Self.hang) { second.store.lastSequence >= 100_000 })
        print("rebuilt an empty replica from an image of \(leaderStore.journal.size) bytes (100 000 records, 1 000 after the snapshot) in \(ContinuousClock.now - started)")
        let replies = Replies()
        try LinkTests.write(200_001...200_100, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count == 100 && $0.values.allSatisfy { $0 } } })

        // A third, wiped, joins while writes go on and are acknowledged (by the second).
        let third = try Replica(root.path + "/w3")
        defer { third.stop(); third.store.close() }
        started = .now
        try third.follow(leader, context: context)
        try LinkTests.write(200_101...201_000, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { third.store.lastSequence == 101_000 })
        print("rebuilt a wiped replica while 900 writes went on, in \(ContinuousClock.now - started)")
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count == 1000 && $0.values.allSatisfy { $0 } } })

        // It holds what the leader holds, and counts: with the second gone, writes are acknowledged.
        second.stop()
        try LinkTests.write(201_001...201_010, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count == 1010 && $0.values.allSatisfy { $0 } } })
        #expect(eventually(timeout: Self.hang) { third.store.lastSequence == 101_010 })
        for replica in [second, third] {
            #expect(replica.store.journal.snapshotSequence == 99_000)
            #expect(replica.history.starts == leaderHistory.starts)
        }
        #expect(third.store.state.snapshot() == leaderStore.state.snapshot())
        #expect(Self.records(third.store) == Self.records(leaderStore))
        #expect(third.store.bytes == leaderStore.bytes)
    }

    @Test func aRecoveringLeaderBehindItsSourcesSnapshotPullsTheImage() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        // w2 has 1…5000 of epoch 3, compacted at 4000; w1 has 1…6 only, and wins epoch 9.
        let ahead = try TestStore(directory: root.path + "/w2")
        let aheadHistory = try EpochHistory(path: ahead.history)
        try aheadHistory.record(EpochHistory.Start(epoch: 3, startSequence: 1))
        for number in 1...4000 { _ = try ahead.write(number) }
        let six = try JournalTail(journal: ahead.journal, after: 0).next(maxBytes: 1 << 20).prefix(6)
        try ahead.compact()
        for number in 4001...5000 { _ = try ahead.write(number) }
        let behind = try TestStore(directory: root.path + "/w1")
        defer { behind.close() }
        let behindHistory = try EpochHistory(path: behind.history)
        try behindHistory.record(EpochHistory.Start(epoch: 3, startSequence: 1))
        for record in six { _ = try behind.append(record) }
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 9, store: behind, history: behindHistory,
            replicas: 3, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }
        let follower = Replica(store: ahead, history: aheadHistory)
        defer { follower.stop(); ahead.close() }
        try follower.follow(leader, context: context)
        #expect(leader.waitUntilRecovered(timeout: Self.hang))
        #expect(behind.lastSequence == 5000)
        #expect(behind.journal.snapshotSequence == 4000)
        #expect(behindHistory.starts == [EpochHistory.Start(epoch: 3, startSequence: 1), EpochHistory.Start(epoch: 9, startSequence: 5001)])
        let replies = Replies()
        try LinkTests.write(5001...5002, leader: leader, store: behind, replies: replies)
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count == 2 && $0.values.allSatisfy { $0 } } })
        #expect(eventually(timeout: Self.hang) { ahead.bytes == behind.bytes })
        #expect(behind.state.snapshot() == ahead.state.snapshot())
    }

    /// A leader's compacted journal and a follower with a few of its records, for the tests that
    /// hand images to a ``FollowerReplica`` directly.
    struct Pair {
        let leader: TestStore
        let follower: TestStore
        let replica: FollowerReplica
        let history: EpochHistory
        let image: JournalImage

        init(_ root: String) throws {
            leader = try TestStore(directory: root + "/w1")
            for number in 1...3000 { _ = try leader.write(number) }
            try leader.compact()
            for number in 3001...3100 { _ = try leader.write(number) }
            image = JournalImage(of: leader.journal)
            follower = try TestStore(directory: root + "/w2")
            for number in 1...10 { _ = try follower.write(number) }
            history = try EpochHistory(path: follower.history)
            try history.record(EpochHistory.Start(epoch: 2, startSequence: 1))
            replica = FollowerReplica(partition: "books.p0", store: follower, history: history)
        }

        /// The image's pieces of `size` bytes as messages of epoch 7 (the last with `crc`).
        func pieces(size: Int = 64 << 10, crc: UInt32? = nil, end: LogPosition = LogPosition(epoch: 0, sequence: 3100)) throws -> [ReplicationMessage] {
            var messages: [ReplicationMessage] = []
            var offset: UInt64 = 0
            var whole: UInt32 = 0
            while offset < image.size {
                let bytes = try image.read(at: offset, maxBytes: size)
                whole = CRC32C.checksum(bytes, continuing: whole)
                let last = offset + UInt64(bytes.count) == image.size
                messages.append(.snapshot(
                    partition: "books.p0", epoch: 7, offset: offset, size: image.size, end: end, epochs: [],
                    crc: last ? (crc ?? whole) : nil, bytes: bytes))
                offset += UInt64(bytes.count)
            }
            return messages
        }

        func close() {
            leader.close()
            follower.close()
        }
    }

    @Test func damagedImagesAreRefusedAndNothingIsInstalled() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let pair = try Pair(root.path)
        defer { pair.close() }
        let before = pair.follower.bytes
        let position = pair.replica.position
        let pieces = try pair.pieces()
        #expect(pieces.count > 2)

        // A piece damaged on the way: its checksum does not match, the message is refused.
        var frames = pieces[1].frames()
        frames[1][100] ^= 0x20
        #expect(throws: ReplicationError.self) { try ReplicationMessage(frames: frames) }
        // A piece missing: the next does not follow; refused, the staging dropped.
        #expect(pair.replica.handle(pieces[0]) == .snapshotFetch(partition: "books.p0", epoch: 7, offset: 64 << 10, maxBytes: JournalChunk.maxBytes))
        guard case .refuse(_, _, .gap, _)? = pair.replica.handle(pieces[2]) else { Issue.record("a gap was not refused"); return }
        #expect(!FileManager.default.fileExists(atPath: pair.history.stagingDirectory))
        // Whole, but its checksum is not the source's: refused at the end.
        let wrong = try pair.pieces(crc: 12345)
        for piece in wrong.dropLast() { _ = pair.replica.handle(piece) }
        guard case .refuse(_, _, .badRecord, _)? = pair.replica.handle(wrong.last!) else { Issue.record("a bad checksum was not refused"); return }
        // Whole and consistent, but not ending where it claims: the replay check refuses it.
        let short = try pair.pieces(end: LogPosition(epoch: 0, sequence: 3200))
        for piece in short.dropLast() { _ = pair.replica.handle(piece) }
        guard case .refuse(_, _, .badRecord, _)? = pair.replica.handle(short.last!) else { Issue.record("a wrong end was not refused"); return }
        #expect(pair.follower.bytes == before)
        #expect(pair.replica.position == position)
        #expect(pair.history.starts == [EpochHistory.Start(epoch: 2, startSequence: 1)])
        #expect(!FileManager.default.fileExists(atPath: pair.history.stagingDirectory))

        // The good image installs; the follower then says where it stands.
        let good = try pair.pieces()
        for piece in good.dropLast() { _ = pair.replica.handle(piece) }
        #expect(pair.replica.handle(good.last!) == .follow(partition: "books.p0", epoch: 7, position: LogPosition(epoch: 0, sequence: 3100)))
        #expect(pair.follower.bytes == pair.leader.bytes)
        #expect(pair.follower.state.snapshot() == pair.leader.state.snapshot())
        #expect(pair.history.starts == [])
    }

    @Test(arguments: [SnapshotInstallStep.staged, .journalInstalled])
    func anInstallStoppedMidwayLeavesTheOldJournalOrTheNewOne(_ step: SnapshotInstallStep) throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let pair = try Pair(root.path)
        let before = pair.follower.bytes
        pair.replica.installStepHook = { reached in
            if reached == step { throw JournalError(.io, "crash at \(reached)") }
        }
        let pieces = try pair.pieces()
        for piece in pieces.dropLast() { _ = pair.replica.handle(piece) }
        guard case .refuse? = pair.replica.handle(pieces.last!) else { Issue.record("the crash was not reported"); return }
        // The process dies here: what the disk holds opens as one whole state.
        pair.close()
        let reopened = try TestStore(directory: root.path + "/w2")
        defer { reopened.close() }
        let history = try EpochHistory(path: reopened.history)
        #expect(!FileManager.default.fileExists(atPath: history.stagingDirectory))
        switch step {
        case .staged:
            #expect(reopened.bytes == before)
            #expect(history.starts == [EpochHistory.Start(epoch: 2, startSequence: 1)])
        case .journalInstalled:
            #expect(reopened.bytes == pair.leader.bytes)
            #expect(reopened.lastSequence == 3100)
            #expect(history.starts == [])
            #expect(history.adopted == 7)
        }
    }

    /// A worker's replica store (``PartitionReplicaStore``) compacting on its own as it follows,
    /// then rebuilt (its install) after the leader compacted past it while it was stopped.
    @Test func aWorkersReplicaStoreCompactsOnItsOwnAndIsRebuilt() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let leaderStore = try TestStore(directory: root.path + "/w1")
        defer { leaderStore.close() }
        let leaderHistory = try EpochHistory(path: leaderStore.history)
        let leader = try ReplicationLeader(
            partition: "books.p0", epoch: 3, store: leaderStore, history: leaderHistory,
            replicas: 2, context: context, endpoint: "tcp://127.0.0.1:*", mayAcknowledge: { true })
        defer { leader.stop() }
        let options = JournalOptions(durability: .always, compactionMinimumBytes: 64 << 10)
        let store = try PartitionReplicaStore(directory: root.path + "/w2", emptyState: { KeyedJournalState() }, options: options)
        defer { store.close() }
        let history = try EpochHistory(path: root.path + "/w2/epochs.jsonl")
        var follower = try ReplicationFollower(
            replica: FollowerReplica(partition: "books.p0", store: store, history: history), epoch: 3, context: context, leaderEndpoint: leader.endpoint)
        #expect(leader.waitUntilRecovered(timeout: Self.hang))
        let replies = Replies()
        // The follower's journal passes its 64 KiB threshold and compacts while it follows.
        try LinkTests.write(1...5000, leader: leader, store: leaderStore, replies: replies)
        #expect(eventually(timeout: Self.hang) { store.lastSequence == 5000 })
        #expect(eventually(timeout: Self.hang) { store.journal.snapshotSequence > 0 }, "the follower's journal never compacted")

        follower.stop()
        try LinkTests.write(5001...6000, leader: leader, store: leaderStore, replies: replies)
        try leaderStore.compact()
        try LinkTests.write(6001...6010, leader: leader, store: leaderStore, replies: replies)
        follower = try ReplicationFollower(
            replica: FollowerReplica(partition: "books.p0", store: store, history: history), epoch: 3, context: context, leaderEndpoint: leader.endpoint)
        defer { follower.stop() }
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count == 6010 && $0.values.allSatisfy { $0 } } })
        #expect(eventually(timeout: Self.hang) { store.lastSequence == 6010 })
        #expect(store.journal.snapshotSequence == 6000)
        var replayed = KeyedJournalState()
        _ = try Journal.check(directory: root.path + "/w2", state: &replayed)
        #expect(replayed.snapshot() == leaderStore.state.snapshot())
        let (_, taken) = try store.takeState()
        #expect((taken as? KeyedJournalState)?.snapshot() == leaderStore.state.snapshot())
    }
}
