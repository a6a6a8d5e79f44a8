import Foundation
@testable import Journal
import LyceumSupport
import Testing

@Suite struct RecoveryTests {
    /// Cuts a 10-record journal at every byte offset within its last three records.
    @Test func truncationAtEveryOffsetOfTheLastThreeRecordsKeepsExactlyTheRecordsBefore() throws {
        try withTemporaryDirectory { source in
            try makeJournal(in: source, records: 10)
            let bytes = try readBytes(journalPath(source))
            let boundaries = lineBoundaries(bytes)  // header, records 1…10, end
            for cut in boundaries[8]...bytes.count {
                try withTemporaryDirectory { directory in
                    try writeBytes(Array(bytes[..<cut]), to: journalPath(directory))
                    let complete = boundaries.dropFirst().filter { $0 <= cut }.count - 1
                    let (state, lastSequence) = try reopen(directory)
                    #expect(lastSequence == UInt64(complete), "cut at \(cut)")
                    #expect(state.liveCounts["books"] == complete, "cut at \(cut)")
                    let expectedSize = boundaries[complete + 1]
                    #expect(try readBytes(journalPath(directory)) == Array(bytes[..<expectedSize]), "cut at \(cut)")
                    let saved = try files(in: directory, prefix: "journal.jsonl.torn-")
                    if cut == expectedSize {
                        #expect(saved.isEmpty, "cut at \(cut)")
                    } else {
                        #expect(saved == ["journal.jsonl.torn-\(expectedSize)"], "cut at \(cut)")
                        #expect(try readBytes(directory + "/" + saved[0]) == Array(bytes[expectedSize..<cut]))
                    }
                }
            }
        }
    }

    /// A flipped byte is never accepted: in the last record it is a torn tail, elsewhere a refusal
    /// naming the damaged line's offset.
    @Test func randomByteFlipsAreNeverAcceptedSilently() throws {
        try withTemporaryDirectory { source in
            try makeJournal(in: source, records: 20)
            let bytes = try readBytes(journalPath(source))
            let boundaries = lineBoundaries(bytes)
            let lastRecord = boundaries[20]
            var generator = SeededGenerator(seed: 20_261_130)
            try withTemporaryDirectory { directory in
                for trial in 0..<1200 {
                    let position = Int.random(in: 0..<bytes.count, using: &generator)
                    var damaged = bytes
                    damaged[position] ^= UInt8.random(in: 1...255, using: &generator)
                    try writeBytes(damaged, to: journalPath(directory))
                    let line = boundaries.lastIndex { $0 <= position }!
                    if position >= lastRecord {
                        let (state, lastSequence) = try reopen(directory)
                        #expect(lastSequence == 19, "trial \(trial) at \(position)")
                        #expect(state.liveCounts["books"] == 19)
                        #expect(try readBytes(journalPath(directory)) == Array(bytes[..<lastRecord]))
                        for name in try files(in: directory, prefix: "journal.jsonl.torn-") {
                            try FileManager.default.removeItem(atPath: directory + "/" + name)
                        }
                    } else {
                        let error = journalError { _ = try reopen(directory) }
                        let expected: JournalError.Code = line == 0 ? .invalidHeader : .midJournalCorruption
                        #expect(error?.code == expected, "trial \(trial) at \(position): \(String(describing: error))")
                        #expect(error?.offset == UInt64(boundaries[line]), "trial \(trial) at \(position)")
                        #expect(try readBytes(journalPath(directory)) == damaged, "a refused journal is left as it was")
                    }
                }
            }
        }
    }

    static let junkTails: [(String, [UInt8])] = {
        var generator = SeededGenerator(seed: 7)
        let record = RecordFormat.line(.record(sequence: 11), body: changesBody([.put("books", key: "b11", value: bookValue(11))]))
        return [
            ("zeros", [UInt8](repeating: 0, count: 4096)),
            ("random bytes", (0..<3000).map { _ in UInt8.random(in: 0...255, using: &generator) }),
            ("random lines", (0..<3000).map { index in index % 97 == 0 ? 0x0A : UInt8.random(in: 0...255, using: &generator) }),
            ("half a record", Array(record[..<(record.count / 2)])),
            ("a record without its newline", Array(record.dropLast())),
            ("a line without a checksum", Array(#"{"seq":11,"changes":[{"put":"books","key":"b11","value":{}}]}"#.utf8) + [0x0A]),
            ("a record with a wrong checksum", Array(record[..<(record.count - 4)]) + Array("00\"}\n".utf8)),
            ("a lone newline", [0x0A]),
        ]
    }()

    @Test(arguments: junkTails.indices)
    func junkTailsAreCutOffAndSaved(_ index: Int) throws {
        let (name, junk) = Self.junkTails[index]
        try withTemporaryDirectory { directory in
            try makeJournal(in: directory, records: 10)
            let good = try readBytes(journalPath(directory))
            try writeBytes(good + junk, to: journalPath(directory))
            let (state, lastSequence) = try reopen(directory)
            #expect(lastSequence == 10, "\(name)")
            #expect(state.liveCounts["books"] == 10)
            #expect(try readBytes(journalPath(directory)) == good)
            #expect(try readBytes(directory + "/journal.jsonl.torn-\(good.count)") == junk, "\(name)")
            let report = try checkReport(directory)
            #expect(report.isHealthy)
        }
    }

    @Test func midJournalCorruptionIsRefusedWithFileOffsetAndSequence() throws {
        try withTemporaryDirectory { directory in
            try makeJournal(in: directory, records: 6)
            var bytes = try readBytes(journalPath(directory))
            let boundaries = lineBoundaries(bytes)
            bytes[boundaries[3] + 12] ^= 0x01
            try writeBytes(bytes, to: journalPath(directory))
            let error = journalError { _ = try reopen(directory) }
            #expect(error?.code == .midJournalCorruption)
            #expect(error?.path == journalPath(directory))
            #expect(error?.offset == UInt64(boundaries[3]))
            #expect(error?.sequence == 3)
            #expect(try files(in: directory, prefix: "journal.jsonl.torn-").isEmpty)
        }
    }

    @Test(arguments: [[1, 3], [1, 2, 2], [1, 2, 1], [2]])
    func sequenceGapsAndDuplicatesAreRefused(_ sequences: [UInt64]) throws {
        try withTemporaryDirectory { directory in
            var bytes = RecordFormat.line(.header(version: 1, base: 0, parts: 0), body: [])
            for sequence in sequences {
                bytes += RecordFormat.line(.record(sequence: sequence), body: changesBody([.delete("books", key: "b\(sequence)")]))
            }
            try writeBytes(bytes, to: journalPath(directory))
            let error = journalError { _ = try reopen(directory) }
            #expect(error?.code == .sequenceGap)
            #expect(error?.offset == UInt64(lineBoundaries(bytes)[sequences.count]))
        }
    }

    @Test func damagedOrUnknownHeadersAreRefused() throws {
        let headers: [[UInt8]] = [
            [],
            Array("not a journal\n".utf8),
            RecordFormat.line(.header(version: 2, base: 0, parts: 0), body: []),
            Array(RecordFormat.line(.header(version: 1, base: 0, parts: 0), body: []).dropLast()),
        ]
        for header in headers {
            try withTemporaryDirectory { directory in
                try writeBytes(header, to: journalPath(directory))
                #expect(journalError { _ = try reopen(directory) }?.code == .invalidHeader)
                #expect(try readBytes(journalPath(directory)) == header)
            }
        }
    }

    @Test func aSecondOpenerGetsTheHoldersPID() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, state: &state)
            let error = journalError { _ = try reopen(directory) }
            #expect(error?.code == .locked)
            #expect(error?.holderPID == getpid())
            journal.close()
            #expect(try reopen(directory).lastSequence == 0)
        }
    }

    private func checkReport(_ directory: String) throws -> JournalReport {
        var state = KeyedJournalState()
        return try Journal.check(directory: directory, state: &state)
    }
}

/// The `"changes"` member of a record, as the journal writes it.
func changesBody(_ changes: [JournalChange]) -> [UInt8] {
    var body: [UInt8] = []
    RecordFormat.appendChanges(changes, to: &body)
    return body
}
