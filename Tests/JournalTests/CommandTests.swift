import Foundation
import Journal
import LyceumTestSupport
import Testing

/// `lyceum journal check|repair|compact`, run as the real executable.
@Suite struct CommandTests {
    @Test func checkRepairAndCompactReportAndExitAsDocumented() throws {
        let lyceum = try builtExecutable("lyceum")
        try withTemporaryDirectory { directory in
            let example = try readBytes(repositoryRoot + "/protocol/examples/journal.jsonl")
            try writeBytes(example + Array("{\"seq\":5,\"chan".utf8), to: journalPath(directory))

            let broken = try runLyceum(lyceum, ["journal", "check", "--data", directory])
            #expect(broken.status == 1)
            #expect(broken.output.contains("records:        4 after the snapshot, last sequence 4"))
            #expect(broken.output.contains("live entities:  2 (books=1 progress=1)"))
            #expect(broken.output.contains("status:         torn_tail at offset \(example.count), sequence 5"))

            let repaired = try runLyceum(lyceum, ["journal", "repair", "--data", directory])
            #expect(repaired.status == 0)
            #expect(repaired.output.contains("dropped:  14 bytes (1 lines) from offset \(example.count)"))
            #expect(try readBytes(journalPath(directory)) == example)

            let compacted = try runLyceum(lyceum, ["journal", "compact", "--data", directory])
            #expect(compacted.status == 0)
            #expect(compacted.output.contains("2 live entities at sequence 4"))

            let healthy = try runLyceum(lyceum, ["journal", "check", "--data", directory])
            #expect(healthy.status == 0)
            #expect(healthy.output.contains("snapshot:       sequence 4, 1 parts"))
            #expect(healthy.output.contains("status:         healthy"))

            #expect(try runLyceum(lyceum, ["journal", "check"]).status == 2)
            #expect(try runLyceum(lyceum, ["journal", "compact", "--data", directory + "/missing"]).status == 1)
        }
    }

    private func runLyceum(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let finished = try ChildProcess.run(executable, arguments)
        return (finished.status ?? -1, finished.standardOutput)
    }
}
