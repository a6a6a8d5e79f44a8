import Foundation
import Journal
import Testing

/// What replication needs of the journal: records read as their lines after a sequence, appended
/// unchanged by a follower, and a follower's tail cut off.
@Suite struct JournalReplicationTests {
    @Test func aFollowerAppendsTheLeadersLinesAndEndsWithTheSameBytes() throws {
        try withTemporaryDirectory { root in
            var leaderState = KeyedJournalState()
            let leader = try Journal.open(directory: root + "/leader", options: JournalOptions(durability: .always), state: &leaderState)
            var followerState = KeyedJournalState()
            let follower = try Journal.open(directory: root + "/follower", options: JournalOptions(durability: .always), state: &followerState)
            for number in 1...20 {
                let changes: [JournalChange] = [.put("books", key: "b\(number)", value: bookValue(number)), .put("idempotency", key: "req-\(number)", value: Array(#"{"seq":1}"#.utf8))]
                _ = try leader.append(changes)
                for change in changes { leaderState.apply(change) }
            }
            let tail = JournalTail(journal: leader, after: 0)
            var shipped: [ReplicatedRecord] = []
            while case let records = try tail.next(maxBytes: 600), !records.isEmpty { shipped += records }
            #expect(shipped.map(\.sequence) == Array(1...20))
            for record in shipped {
                // What the wire delivers: the bytes, checked again on arrival.
                let received = try ReplicatedRecord(line: record.line)
                let pending = try follower.appendReplicated(received)
                for change in received.changes() { followerState.apply(change) }
                #expect(try pending.waitUntilDurable().sequence == received.sequence)
            }
            #expect(try tail.next(maxBytes: 600).isEmpty)
            leader.close()
            follower.close()
            #expect(try readBytes(journalPath(root + "/leader")) == readBytes(journalPath(root + "/follower")))
            #expect(followerState.snapshot() == leaderState.snapshot())
            #expect(followerState.snapshot().count == 40)
        }
    }

    @Test func damagedOrOutOfOrderRecordsAreRefusedAndNothingIsWritten() throws {
        try withTemporaryDirectory { root in
            var state = KeyedJournalState()
            let source = try Journal.open(directory: root + "/source", options: JournalOptions(durability: .none), state: &state)
            for number in 1...3 { _ = try source.append([.put("books", key: "b\(number)", value: bookValue(number))]) }
            let records = try JournalTail(journal: source, after: 0).next(maxBytes: 1 << 20)
            var damaged = records[0].line
            damaged[10] ^= 0x01
            #expect(throws: JournalError.self) { try ReplicatedRecord(line: damaged) }
            #expect(throws: JournalError.self) { try ReplicatedRecord(line: Array(records[0].line.dropLast())) }
            #expect(throws: JournalError.self) { try ReplicatedRecord(line: Array(#"{"format":"lyceum-journal","version":1,"base":0,"parts":0,"crc":"d6591038"}"#.utf8) + [0x0A]) }
            var other = KeyedJournalState()
            let follower = try Journal.open(directory: root + "/follower", options: JournalOptions(durability: .none), state: &other)
            let gap = #expect(throws: JournalError.self) { try follower.appendReplicated(records[1]) }
            #expect(gap?.code == .invalidRecord)
            #expect(follower.lastSequence == 0)
            _ = try follower.appendReplicated(records[0])
            #expect(throws: JournalError.self) { try follower.appendReplicated(records[0]) }
            #expect(follower.lastSequence == 1)
        }
    }

    @Test func aTailFollowsTheJournalAcrossACompaction() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
            defer { journal.close() }
            for number in 1...10 {
                let change = JournalChange.put("books", key: "b\(number)", value: bookValue(number))
                _ = try journal.append([change])
                state.apply(change)
            }
            let behind = JournalTail(journal: journal, after: 2)
            let current = JournalTail(journal: journal, after: 0)
            #expect(try current.next(maxBytes: 1 << 20).map(\.sequence) == Array(1...10))
            let captured = state
            try journal.compact { (captured, 10) }
            for number in 11...12 {
                _ = try journal.append([.put("books", key: "b\(number)", value: bookValue(number))])
            }
            // Caught up before the compaction: it goes on after it.
            #expect(try current.next(maxBytes: 1 << 20).map(\.sequence) == [11, 12])
            // Behind it: those records are in the snapshot now.
            let error = #expect(throws: JournalError.self) { try behind.next(maxBytes: 1 << 20) }
            #expect(error?.code == .snapshotNeeded)
            #expect(journal.snapshotSequence == 10)
        }
    }

    @Test func aReplicasTailIsCutAfterASequenceAndSavedBeside() throws {
        try withTemporaryDirectory { directory in
            try makeJournal(in: directory, records: 8)
            #expect(try Journal.truncate(directory: directory, after: 5) == 3)
            #expect(try Journal.truncate(directory: directory, after: 5) == 0)
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
            #expect(journal.lastSequence == 5)
            // A journal held open cannot be cut.
            let locked = #expect(throws: JournalError.self) { try Journal.truncate(directory: directory, after: 1) }
            #expect(locked?.code == .locked)
            journal.close()
            let saved = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".torn-") }
            #expect(saved.count == 1)
        }
    }
}
