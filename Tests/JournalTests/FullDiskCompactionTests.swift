import Foundation
import Journal
import LyceumTestSupport
import Testing

/// A compaction on a full disk (a 256 KiB tmpfs): the new file cannot be written, the
/// compaction fails with ENOSPC and leaves no temporary file, the journal goes on with the old
/// file (appends work again once space returns), and nothing acknowledged is lost.
@Suite struct FullDiskCompactionTests {
    @Test(.enabled(if: canMountTmpfs, "mounting a tmpfs needs root"))
    func aCompactionThatRunsOutOfSpaceLeavesTheJournalAsItWas() throws {
        try withTemporaryDirectory { directory in
            #expect(run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", directory]) == 0)
            defer { #expect(run("/bin/umount", [directory]) == 0) }
            let data = directory + "/data"
            let service = try GuardedState(directory: data, options: JournalOptions(durability: .always))
            let padding = String(repeating: "p", count: 1000)
            for number in 0..<60 {
                try service.write([.put("books", key: "b\(number)", value: Array(#"{"padding":"\#(padding)"}"#.utf8))])
            }
            // What is left of the tmpfs is less than the compacted journal needs.
            let filler = directory + "/filler"
            var free = statvfs()
            #expect(statvfs(directory, &free) == 0)
            let room = Int(free.f_bavail) * Int(free.f_bsize)
            try writeBytes([UInt8](repeating: 1, count: max(0, room - 16 << 10)), to: filler)

            let failure = journalError { try service.journal.compact(capture: service.capture) }
            #expect(failure?.systemError == ENOSPC, "\(String(describing: failure))")
            #expect(try files(in: data, prefix: "journal") == ["journal.jsonl", "journal.lock"], "the compaction's temporary file was left behind")

            try FileManager.default.removeItem(atPath: filler)
            try service.write([.put("books", key: "after", value: Array("{}".utf8))])
            let expected = service.state.withLock { $0 }
            service.journal.close()
            let (recovered, lastSequence) = try reopen(data)
            #expect(recovered == expected)
            #expect(lastSequence == 61)
        }
    }
}
