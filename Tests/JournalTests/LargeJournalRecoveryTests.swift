import Foundation
@testable import Journal
import Testing

/// Replay reads the lines after the header on a thread of its own, in batches of about 1 MiB
/// (`LinePrefetcher`); these journals span several batches, so that the recovery rules are
/// checked where a batch other than the first holds the problem.
@Suite struct LargeJournalRecoveryTests {
    /// 3,000 records of about 2 KiB: about 6 MiB.
    static let recordCount = 3000
    /// The record with the problem, about 5 MiB in.
    static let target = 2500

    /// A header, `parts` snapshot parts of 800 puts each, then records `sequences`, each one put.
    static func journal(parts: Int = 0, sequences: [Int]) -> [UInt8] {
        let padding = String(repeating: "x", count: 2000)
        var bytes = RecordFormat.line(.header(version: 1, base: 0, parts: UInt64(parts)), body: [])
        for part in 0..<parts {
            let puts = (0..<800).map { JournalChange.put("books", key: "s\(part)-\($0)", value: bookValue($0, title: padding)) }
            bytes += RecordFormat.line(.snapshot(part: UInt64(part)), body: changesBody(puts))
        }
        for sequence in sequences {
            let put = JournalChange.put("books", key: "b\(sequence)", value: bookValue(sequence, title: padding))
            bytes += RecordFormat.line(.record(sequence: UInt64(sequence)), body: changesBody([put]))
        }
        return bytes
    }

    @Test func everyRecordOfALargeJournalReplays() throws {
        try withTemporaryDirectory { directory in
            try writeBytes(Self.journal(parts: 3, sequences: Array(1...Self.recordCount)), to: journalPath(directory))
            let (state, lastSequence) = try reopen(directory)
            #expect(lastSequence == UInt64(Self.recordCount))
            #expect(state.liveCounts["books"] == 3 * 800 + Self.recordCount)
        }
    }

    @Test func aDamagedRecordFarInIsRefusedAtItsOffset() throws {
        try withTemporaryDirectory { directory in
            var bytes = Self.journal(sequences: Array(1...Self.recordCount))
            let boundaries = lineBoundaries(bytes)
            bytes[boundaries[Self.target] + 12] ^= 0x01
            try writeBytes(bytes, to: journalPath(directory))
            let error = journalError { _ = try reopen(directory) }
            #expect(error?.code == .midJournalCorruption)
            #expect(error?.offset == UInt64(boundaries[Self.target]))
            #expect(error?.sequence == UInt64(Self.target))
            #expect(try readBytes(journalPath(directory)) == bytes, "a refused journal is left as it was")
        }
    }

    @Test func aGapFarInIsRefusedAtItsOffset() throws {
        try withTemporaryDirectory { directory in
            let bytes = Self.journal(sequences: (1...Self.recordCount).filter { $0 != Self.target })
            try writeBytes(bytes, to: journalPath(directory))
            let error = journalError { _ = try reopen(directory) }
            #expect(error?.code == .sequenceGap)
            // Line `target` (the header is line 0) holds the record after the missing one.
            #expect(error?.offset == UInt64(lineBoundaries(bytes)[Self.target]))
            #expect(error?.sequence == UInt64(Self.target))
        }
    }

    @Test func aTornTailOfALargeJournalIsCutAndSaved() throws {
        try withTemporaryDirectory { directory in
            let bytes = Self.journal(sequences: Array(1...Self.recordCount))
            let lastRecord = lineBoundaries(bytes)[Self.recordCount]
            let cut = lastRecord + 100
            try writeBytes(Array(bytes[..<cut]), to: journalPath(directory))
            let (state, lastSequence) = try reopen(directory)
            #expect(lastSequence == UInt64(Self.recordCount - 1))
            #expect(state.liveCounts["books"] == Self.recordCount - 1)
            #expect(try readBytes(journalPath(directory)) == Array(bytes[..<lastRecord]))
            #expect(try readBytes(directory + "/journal.jsonl.torn-\(lastRecord)") == Array(bytes[lastRecord..<cut]))
        }
    }

    @Test func aDamagedSnapshotPartFarInIsRefused() throws {
        try withTemporaryDirectory { directory in
            var bytes = Self.journal(parts: 4, sequences: [1, 2])
            let boundaries = lineBoundaries(bytes)
            bytes[boundaries[3] + 40] ^= 0x01  // part 2: line 3
            try writeBytes(bytes, to: journalPath(directory))
            let error = journalError { _ = try reopen(directory) }
            #expect(error?.code == .corruptSnapshot)
            #expect(error?.offset == UInt64(boundaries[3]))
        }
    }
}
