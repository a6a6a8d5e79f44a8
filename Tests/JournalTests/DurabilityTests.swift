import Foundation
@testable import Journal
import LyceumTestSupport
import Testing

@Suite struct DurabilityTests {
    /// Sixteen writers under `always`: every append is acknowledged after a sync, and group
    /// commit makes one sync serve several of them.
    @Test func concurrentWritersShareSyncs() throws {
        try withTemporaryDirectory { directory in
            let service = try GuardedState(directory: directory, options: JournalOptions(durability: .always))
            let done = DispatchGroup()
            for writer in 0..<16 {
                done.enter()
                Thread {
                    defer { done.leave() }
                    for number in 0..<40 {
                        do { try service.write([.put("books", key: "w\(writer)-\(number)", value: bookValue(number))]) } catch {
                            Issue.record("\(error)")
                        }
                    }
                }.start()
            }
            done.wait()
            let statistics = service.journal.statistics
            #expect(statistics.appends == 640)
            #expect(statistics.syncs < statistics.appends, "\(statistics)")
            #expect(service.journal.durability.durable == 640)
            service.journal.close()
            #expect(try reopen(directory).state.liveCounts == ["books": 640])
        }
    }

    @Test func theIntervalPolicyAcknowledgesAtOnceAndSyncsInTheBackground() throws {
        try withTemporaryDirectory { directory in
            let service = try GuardedState(directory: directory, options: JournalOptions(durability: .interval(milliseconds: 20)))
            for number in 0..<10 { try service.write([.put("books", key: "b\(number)", value: bookValue(number))]) }
            #expect(eventually { service.journal.durability.durable >= 10 })
            #expect(service.journal.durability.durable == 10)
            #expect(service.journal.statistics.syncs >= 1)
            service.journal.close()
        }
    }

    @Test func replayReportsProgressUpToTheWholeFile() throws {
        try withTemporaryDirectory { directory in
            try makeJournal(in: directory, records: 50)
            var reports: [JournalProgress] = []
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, state: &state) { reports.append($0) }
            journal.close()
            let size = UInt64(try readBytes(journalPath(directory)).count)
            #expect(reports.first == JournalProgress(phase: .replay, bytesDone: 0, bytesTotal: size))
            #expect(reports.last == JournalProgress(phase: .replay, bytesDone: size, bytesTotal: size))
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesDone <= $1.bytesDone })
        }
    }

    /// The same rollback as on a full disk, provoked with RLIMIT_FSIZE in a child process (so that
    /// it needs no privileges): EFBIG, rollback, and writes resume once the limit is lifted.
    @Test func aFileSizeLimitFailsWritesCleanlyInAChild() throws {
        let executable = try stressExecutable()
        try withTemporaryDirectory { directory in
            let child = try ChildProcess(executable, ["fill", directory, "65536"])
            let status = child.waitForExit()
            #expect(child.endingSignal == nil && status == 0)
            let lines = child.standardOutput.split(separator: "\n")
            try #require(lines.count == 3, "\(lines)")
            let acknowledged = Int(lines[0].split(separator: " ")[1])!
            #expect(acknowledged > 10)
            #expect(lines[1] == "failed write_failed \(EFBIG)")
            #expect(lines[2] == "resumed \(acknowledged + 20)")
            let (state, lastSequence) = try reopen(directory)
            #expect(lastSequence == UInt64(acknowledged + 20))
            #expect(state.liveCounts["books"] == acknowledged + 20)
            var checked = KeyedJournalState()
            #expect(try Journal.check(directory: directory, state: &checked).isHealthy)
        }
    }
}
