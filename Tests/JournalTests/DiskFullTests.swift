import Foundation
import Journal
import LyceumTestSupport
import Testing

/// Whether this process may mount a tmpfs (it needs root or CAP_SYS_ADMIN).
let canMountTmpfs: Bool = {
    do {
        return try withTemporaryDirectory { directory in
            guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory]) == 0 else { return false }
            return run("/bin/umount", [directory]) == 0
        }
    } catch {
        return false
    }
}()

@discardableResult
func run(_ executable: String, _ arguments: [String]) -> Int32 {
    (try? ChildProcess.run(executable, arguments, standardError: .discarded).status) ?? -1
}

@Suite struct DiskFullTests {
    /// A journal on a 256 KiB tmpfs fills it: the failing write is rolled back with ENOSPC, nothing
    /// acknowledged is lost, and writes resume once space is freed.
    @Test(.enabled(if: canMountTmpfs, "mounting a tmpfs needs root"))
    func writesFailCleanlyOnAFullDiskAndResumeWhenSpaceReturns() throws {
        try withTemporaryDirectory { directory in
            #expect(run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", directory]) == 0)
            defer { #expect(run("/bin/umount", [directory]) == 0) }
            let filler = directory + "/filler"
            try writeBytes([UInt8](repeating: 1, count: 64 << 10), to: filler)
            let data = directory + "/data"
            let service = try GuardedState(directory: data, options: JournalOptions(durability: .always))
            let padding = String(repeating: "p", count: 1000)
            var acknowledged = 0
            var failure: JournalError?
            while failure == nil {
                let change = JournalChange.put("books", key: "b\(acknowledged)", value: Array(#"{"padding":"\#(padding)"}"#.utf8))
                failure = journalError { try service.write([change]) }
                if failure == nil { acknowledged += 1 }
                #expect(acknowledged < 1000, "the disk never filled up")
            }
            #expect(failure?.code == .writeFailed)
            #expect(failure?.systemError == ENOSPC)
            #expect(failure?.path == journalPath(data))
            #expect(failure?.offset == service.journal.size)
            #expect(failure?.sequence == UInt64(acknowledged) + 1)
            #expect(try readBytes(journalPath(data)).count == Int(service.journal.size), "the failed write was rolled back")
            let retry = JournalChange.put("books", key: "again", value: Array(#"{"padding":"\#(padding)"}"#.utf8))
            #expect(journalError { try service.write([retry]) }?.code == .writeFailed, "still full: fails again, cleanly")
            #expect(service.state.withLock { $0.liveCounts["books"] } == acknowledged, "the state only has what was written")

            try FileManager.default.removeItem(atPath: filler)
            for number in 0..<20 {
                try service.write([.put("books", key: "later\(number)", value: Array("{}".utf8))])
            }
            let expected = service.state.withLock { $0 }
            service.journal.close()
            let (recovered, lastSequence) = try reopen(data)
            #expect(recovered == expected)
            #expect(lastSequence == UInt64(acknowledged + 20))
        }
    }
}
