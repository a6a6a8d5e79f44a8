import Foundation
import Journal
import Testing

/// Moving a journal directory as checksummed chunks (the file side of a partition move), on real
/// files: the export, the import's checks, and the directory names that mark each stage.
@Suite struct TransferTests {
    /// Copies `source` into `target` through chunks of `chunkBytes`, the way a move does.
    private func copy(_ source: String, into target: JournalImport, chunkBytes: Int) throws -> [JournalFileSummary] {
        let export = try JournalExport(directory: source)
        try target.begin()
        let summaries = try export.forEachChunk(chunkBytes: chunkBytes) { try target.write($0) }
        try target.finish(expecting: summaries)
        return summaries
    }

    @Test func aJournalCopiedInChunksReplaysTheSameStateAfterAdoption() throws {
        try withTemporaryDirectory { root in
            let source = root + "/a/p3"
            let written = try makeJournal(in: source, records: 300)
            try writeBytes(Array("{\"partition\":3}\n".utf8), to: source + "/PARTITION")
            try writeBytes([], to: source + "/empty")
            let target = JournalImport(destination: root + "/b/p3")
            try FileManager.default.createDirectory(atPath: root + "/b", withIntermediateDirectories: true)

            let summaries = try copy(source, into: target, chunkBytes: 1000)

            #expect(summaries.map(\.file) == ["PARTITION", "empty", "journal.jsonl"])
            #expect(try files(in: root + "/b", prefix: "p3") == ["p3.received"])
            #expect(journalError { try target.adopt(expecting: Array(summaries.dropLast())) }?.code == .transferRejected)
            #expect(try target.adopt(expecting: summaries))
            #expect(try files(in: root + "/b", prefix: "p3") == ["p3"])
            for name in ["PARTITION", "empty", "journal.jsonl"] {
                #expect(try readBytes(root + "/b/p3/" + name) == readBytes(source + "/" + name))
            }
            let replayed = try reopen(root + "/b/p3")
            #expect(replayed.lastSequence == 300)
            #expect(replayed.state.snapshot() == written.snapshot())
            #expect(try target.adopt(expecting: summaries) == false, "a repeated adopt changes nothing")
        }
    }

    @Test func theExportHoldsTheJournalsLockSoNothingAppendsDuringAMove() throws {
        try withTemporaryDirectory { root in
            try makeJournal(in: root + "/p1", records: 3)
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: root + "/p1", state: &state)
            #expect(journalError { _ = try JournalExport(directory: root + "/p1") }?.code == .locked)
            journal.close()

            let export = try JournalExport(directory: root + "/p1")
            #expect(journalError { _ = try Journal.open(directory: root + "/p1", state: &state) }?.code == .locked)
            _ = export
        }
    }

    @Test func renamingAwayLeavesNoJournalUnderTheOldName() throws {
        try withTemporaryDirectory { root in
            try makeJournal(in: root + "/p1", records: 3)
            let before = try readBytes(root + "/p1/journal.jsonl")
            let export = try JournalExport(directory: root + "/p1")
            try export.renameAway(to: root + "/p1.moved-to-w2-20261201T220000Z")
            #expect(try files(in: root, prefix: "p1") == ["p1.moved-to-w2-20261201T220000Z"])
            #expect(try readBytes(root + "/p1.moved-to-w2-20261201T220000Z/journal.jsonl") == before)
        }
    }

    @Test func chunksWithABadNameChecksumSizeOrOffsetAreRefusedAndWriteNothing() throws {
        try withTemporaryDirectory { root in
            let target = JournalImport(destination: root + "/p2")
            let good = JournalChunk(file: "journal.jsonl", offset: 0, bytes: Array("hello\n".utf8))
            #expect(journalError { try target.write(good) }?.code == .transferRejected, "nothing begun")
            try target.begin()
            try target.write(good)

            let refused = [
                JournalChunk(file: "../escape", offset: 0, bytes: [1]),
                JournalChunk(file: "sub/file", offset: 0, bytes: [1]),
                JournalChunk(file: "journal.lock", offset: 0, bytes: [1]),
                JournalChunk(file: "journal.jsonl.tmp", offset: 0, bytes: [1]),
                JournalChunk(file: "", offset: 0, bytes: [1]),
                JournalChunk(file: "journal.jsonl", offset: 6, bytes: Array("x".utf8), crc32c: 12345),
                JournalChunk(file: "journal.jsonl", offset: 9, bytes: Array("gap".utf8)),
                JournalChunk(file: "journal.jsonl", offset: 0, bytes: Array("HELLO\n".utf8)),
                JournalChunk(file: "big", offset: 0, bytes: [UInt8](repeating: 7, count: JournalChunk.maxBytes + 1)),
            ]
            for chunk in refused {
                #expect(journalError { try target.write(chunk) }?.code == .transferRejected, "\(chunk.file) at \(chunk.offset)")
            }
            try target.write(good)  // a retried chunk with the same bytes changes nothing
            #expect(try files(in: target.incoming, prefix: "") == ["journal.jsonl"])
            #expect(try readBytes(target.incoming + "/journal.jsonl") == Array("hello\n".utf8))
            #expect(try files(in: root, prefix: "") == ["p2.incoming"])
        }
    }

    @Test func aCopyThatDiffersFromTheSendersSummaryIsNeitherFinishedNorAdoptable() throws {
        try withTemporaryDirectory { root in
            try makeJournal(in: root + "/p5", records: 20)
            let export = try JournalExport(directory: root + "/p5")
            let target = JournalImport(destination: root + "/copy/p5")
            try FileManager.default.createDirectory(atPath: root + "/copy", withIntermediateDirectories: true)
            try target.begin()
            let summaries = try export.forEachChunk(chunkBytes: 512) { try target.write($0) }
            let journal = try #require(summaries.first)

            let wrong = [
                [JournalFileSummary(file: journal.file, bytes: journal.bytes + 1, crc32c: journal.crc32c)],
                [JournalFileSummary(file: journal.file, bytes: journal.bytes, crc32c: journal.crc32c ^ 1)],
                summaries + [JournalFileSummary(file: "PARTITION", bytes: 3, crc32c: 0)],
                [],
            ]
            for summary in wrong {
                #expect(journalError { try target.finish(expecting: summary) }?.code == .transferRejected)
            }
            #expect(journalError { try target.adopt(expecting: summaries) }?.code == .transferRejected)
            #expect(try files(in: root + "/copy", prefix: "") == ["p5.incoming"])

            try target.finish(expecting: summaries)
            try target.finish(expecting: summaries)  // repeated after a lost reply: already received
            #expect(try files(in: root + "/copy", prefix: "") == ["p5.received"])
        }
    }

    @Test func beginRefusesAHeldDirectoryAndStartsOverAfterAnAbandonedCopy() throws {
        try withTemporaryDirectory { root in
            try makeJournal(in: root + "/p7", records: 2)
            let held = JournalImport(destination: root + "/p7")
            #expect(journalError { try held.begin() }?.code == .alreadyExists)
            #expect(try files(in: root, prefix: "") == ["p7"])

            let fresh = JournalImport(destination: root + "/p8")
            try fresh.begin()
            try fresh.write(JournalChunk(file: "journal.jsonl", offset: 0, bytes: Array("stale".utf8)))
            try fresh.begin()
            #expect(try files(in: fresh.incoming, prefix: "") == [])
            try fresh.discard()
            #expect(try files(in: root, prefix: "") == ["p7"])
        }
    }
}
