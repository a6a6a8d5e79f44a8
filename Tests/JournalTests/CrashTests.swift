import Foundation
@_spi(Testing) import Journal
import LyceumTestSupport
import LyceumSupport
import Testing

@Suite struct CrashTests {
    /// A child appends with policy `always` and reports each acknowledged record, either from four
    /// threads that block for their acknowledgements (`append`) or from one thread keeping 50
    /// writes in flight that `whenDurable` callbacks acknowledge (`acknowledge`); it is killed with
    /// SIGKILL at random moments. After every kill, every acknowledged record is there and the
    /// journal opens cleanly.
    @Test(arguments: [("append", "4"), ("acknowledge", "50")])
    func everyAcknowledgedRecordSurvivesKillNine(mode: String, concurrency: String) throws {
        let executable = try stressExecutable()
        try withTemporaryDirectory { directory in
            var generator = SeededGenerator(seed: 99)
            var acknowledged: [String: UInt64] = [:]
            var kills = 0
            for round in 0..<55 {
                let child = try ChildProcess(executable, [mode, directory, concurrency])
                usleep(UInt32.random(in: 30_000...160_000, using: &generator))
                child.send(SIGKILL)
                _ = child.waitForExit()
                let signal = child.endingSignal
                #expect(signal == SIGKILL, "round \(round): the child ended before it was killed")
                if signal == SIGKILL { kills += 1 }
                let output = child.standardOutput
                // A line without its newline was cut by the kill; only whole lines are reports.
                for line in output.split(separator: "\n", omittingEmptySubsequences: true) where output.contains(line + "\n") {
                    let fields = line.split(separator: " ")
                    acknowledged[String(fields[1])] = UInt64(fields[0])!
                }
                let (state, lastSequence) = try reopen(directory)
                let stored = state.collections["stress"] ?? [:]
                let missing = acknowledged.keys.filter { stored[$0] == nil }
                #expect(missing.isEmpty, "round \(round): acknowledged but lost: \(missing.sorted().prefix(5))")
                #expect(lastSequence >= acknowledged.values.max() ?? 0, "round \(round)")
                var checked = KeyedJournalState()
                #expect(try Journal.check(directory: directory, state: &checked).isHealthy, "round \(round)")
            }
            #expect(kills >= 50)
            #expect(acknowledged.count > 55, "the child acknowledged too few records to prove anything")
        }
    }

    /// Stops a compaction by SIGKILL at each of its steps while two writers keep appending; the
    /// journal then opens with everything it had plus every record acknowledged meanwhile, and the
    /// temporary file is gone.
    @Test(arguments: CompactionStep.allCases)
    func aCrashAtEachCompactionStepRecovers(_ step: CompactionStep) throws {
        let executable = try stressExecutable()
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
            for number in 0..<400 {
                let changes: [JournalChange] = number % 3 == 2
                    ? [.delete("books", key: "b\(number - 1)")]
                    : [.put("books", key: "b\(number)", value: bookValue(number)), .put("progress", key: "p\(number % 7)", value: bookValue(number))]
                _ = try journal.append(changes).waitUntilDurable()
                for change in changes { state.apply(change) }
            }
            journal.close()

            let child = try ChildProcess(executable, ["compact", directory, step.rawValue])
            _ = child.waitForExit()
            #expect(child.endingSignal == SIGKILL)
            let acknowledged = child.standardOutput.split(separator: "\n").map { $0.split(separator: " ") }
            #expect(!acknowledged.isEmpty, "the writers should have been acknowledged during compaction")

            let (recovered, lastSequence) = try reopen(directory)
            #expect(recovered.collections["books"] == state.collections["books"])
            #expect(recovered.collections["progress"] == state.collections["progress"])
            let during = recovered.collections["during"] ?? [:]
            let lost = acknowledged.filter { during[String($0[1])] == nil }
            #expect(lost.isEmpty, "acknowledged during compaction but lost: \(lost.prefix(5))")
            #expect(lastSequence >= acknowledged.compactMap { UInt64($0[0]) }.max() ?? 400)
            #expect(!FileManager.default.fileExists(atPath: directory + "/journal.jsonl.tmp"))
            let header = String(decoding: try readBytes(journalPath(directory)).prefix(80), as: UTF8.self)
            #expect(header.contains(#""base":0,"#) == (step != .afterRename), "\(header)")
        }
    }
}
