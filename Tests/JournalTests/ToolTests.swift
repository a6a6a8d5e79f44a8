import Foundation
import Journal
import Testing

@Suite struct ToolTests {
    @Test func checkCountsRecordsAndLiveEntities() throws {
        try withTemporaryDirectory { directory in
            let service = try GuardedState(directory: directory, options: JournalOptions(durability: .none))
            for number in 0..<30 { try service.write([.put("books", key: "b\(number % 12)", value: bookValue(number))]) }
            try service.write([.delete("books", key: "b0"), .put("progress", key: "l1/c1", value: Array("{}".utf8))])
            service.journal.close()
            var state = KeyedJournalState()
            let report = try Journal.check(directory: directory, state: &state)
            #expect(report.isHealthy)
            #expect(report.records == 31)
            #expect(report.lastSequence == 31)
            #expect(report.fileSize == report.validBytes)
            #expect(state.liveCounts == ["books": 11, "progress": 1])
        }
    }

    @Test func repairBacksUpThenCutsAtTheFirstBadRecord() throws {
        try withTemporaryDirectory { directory in
            try makeJournal(in: directory, records: 8)
            var bytes = try readBytes(journalPath(directory))
            let boundaries = lineBoundaries(bytes)
            bytes[boundaries[5] + 20] ^= 0x20
            try writeBytes(bytes, to: journalPath(directory))

            var state = KeyedJournalState()
            let report = try Journal.check(directory: directory, state: &state)
            #expect(report.problem?.code == .midJournalCorruption)
            #expect(report.problem?.offset == UInt64(boundaries[5]))
            #expect(state.liveCounts == ["books": 4])

            let repair = try Journal.repair(directory: directory)
            #expect(repair.problem?.code == .midJournalCorruption)
            #expect(repair.droppedFromOffset == UInt64(boundaries[5]))
            #expect(repair.droppedBytes == UInt64(bytes.count - boundaries[5]))
            #expect(repair.droppedRecords == 4)
            #expect(try readBytes(repair.backupPath!) == bytes)
            #expect(try reopen(directory).lastSequence == 4)

            let again = try Journal.repair(directory: directory)
            #expect(again.problem == nil && again.backupPath == nil && again.droppedBytes == 0)
        }
    }

    @Test func repairRefusesWhileTheJournalIsOpen() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, state: &state)
            defer { journal.close() }
            #expect(journalError { _ = try Journal.repair(directory: directory) }?.code == .locked)
        }
    }
}
