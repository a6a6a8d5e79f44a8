import Foundation
import LyceumTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Power loss of `lyceum serve`: its data directory on the power-loss filesystem
/// (scripts/powerloss_fs.py), four writers creating books with their `request_id`, each retried
/// until acknowledged (Benchmarks/failover_writers.py), the process killed (SIGKILL) and what it
/// had not synced dropped, then started again on what the disk kept. Counts are printed; what is
/// asserted is what the durability promises.
@Suite(.serialized, .offTheCooperativePool, .enabled(if: PowerLossFilesystem.unavailability == nil, Comment(rawValue: PowerLossFilesystem.unavailability ?? "")),
       .enabled(if: pythonHasZMQ, "the writers need /usr/bin/python3 with pyzmq (scripts/ensure-deps.sh test)"))
struct PowerLossServeTests {
    static let writersScript = PowerLossFilesystem.repository.appendingPathComponent("Benchmarks/failover_writers.py").path
    static let filesystemTest = PowerLossFilesystem.repository.appendingPathComponent("scripts/powerloss_fs_test.py").path

    /// The filesystem's own unittest: unsynced data, entries, renames and unlinks are dropped at a
    /// cut, synced ones kept, a torn cut keeps part of the last write, ENOSPC refuses writes.
    @Test func theFilesystemDropsWhatWasNotSyncedAndKeepsWhatWas() throws {
        let result = try ChildProcess.run("/usr/bin/python3", [Self.filesystemTest, "-v"], timeout: .hangLimit)
        print(result.standardError.split(separator: "\n").filter { $0.contains(" ... ") || $0.hasPrefix("Ran ") }.joined(separator: "\n"))
        #expect(result.status == 0, "\(result)")
        #expect(!result.standardError.contains("skipped"), "\(result.standardError)")
    }

    /// Under `durability always`, three power losses under the write load: the first between a
    /// batch's write and its fdatasync (strace kills the process as it enters the 20th sync) with
    /// a torn last page, so that the next start must cut a torn tail and say so; the others at
    /// a moment of the load. Every acknowledged create is read back once.
    @Test func aPowerLossUnderAlwaysLosesNoAcknowledgedCreate() throws {
        let run = try PowerLossRun(durability: "always")
        defer { run.stop() }
        var tornTails = 0
        for cut in 1...3 {
            try run.awaitAcknowledgements(run.acknowledged + 100)
            let acknowledged = run.acknowledged
            if cut == 1 {
                let strace = try ChildProcess("/usr/bin/strace", [
                    "-f", "-qq", "-e", "trace=fdatasync", "-e", "inject=fdatasync:signal=SIGKILL:when=20", "-p", String(run.serve.processIdentifier),
                ])
                defer { strace.stop() }
                #expect(run.serve.waitForExit() != nil, "serve was not killed at its 20th fdatasync")
            } else {
                run.serve.send(SIGKILL)
                _ = run.serve.waitForExit()
            }
            let summary = try run.disk.cut(torn: true)
            try run.restart()
            let log = run.log
            let cutTail = log.contains("cut off a torn last record")
            if cutTail { tornTails += 1 }
            print("serve power loss \(cut) (always): \(acknowledged) acknowledged before it; the disk lost \(summary); recovery cut a torn tail: \(cutTail)")
            if cut == 1 {
                #expect(summary.contains("\"torn\"") && cutTail, "the torn tail was not cut on recovery: \(summary)\n\(log)")
            }
        }
        try run.awaitAcknowledgements(run.acknowledged + 50)
        let outcome = try run.finish()
        print("serve power loss (always): \(outcome.acknowledged) acknowledged over 3 power losses, \(outcome.lost) lost, \(outcome.doubled) applied twice, \(tornTails) torn tails cut")
        #expect(outcome.acknowledged > 0 && outcome.lost == 0 && outcome.doubled == 0, "\(outcome)")
    }

    /// Under `durability interval:200`, a power loss loses what was acknowledged in the last
    /// period or so: measured and printed beside the period, not asserted. Serve starts again on
    /// what the disk kept and acknowledges writes again.
    @Test func aPowerLossUnderIntervalLosesAtMostItsPeriodAndServesAgain() throws {
        let run = try PowerLossRun(durability: "interval:200")
        defer { run.stop() }
        try run.awaitAcknowledgements(200)
        run.serve.send(SIGKILL)
        _ = run.serve.waitForExit()
        let acknowledged = run.acknowledged
        let summary = try run.disk.cut(torn: true)
        try run.restart()
        try run.awaitAcknowledgements(acknowledged + 50)
        let outcome = try run.finish()
        print("serve power loss (interval:200): \(acknowledged) acknowledged before it, \(outcome.lost) of \(outcome.acknowledged) acknowledged lost, \(outcome.doubled) applied twice; the disk lost \(summary)")
        #expect(outcome.acknowledged > acknowledged, "serve acknowledged nothing after the power loss")
    }
}

/// A serve on a power-loss filesystem under four retrying writers.
final class PowerLossRun: @unchecked Sendable {
    let directory: TemporaryDirectory
    let disk: PowerLossFilesystem
    let endpoint: String
    private let durability: String
    private(set) var serve: LyceumProcess
    private var starts = 0
    private let writers: ChildProcess

    /// What failover_writers.py printed at the end.
    struct Outcome: Decodable {
        let acknowledged: Int
        let lost: Int
        let doubled: Int
    }

    init(durability: String) throws {
        directory = try TemporaryDirectory()
        disk = try PowerLossFilesystem(in: directory.path)
        endpoint = try freeLoopbackEndpoint()
        self.durability = durability
        let firstLog = directory.path + "/serve-0.log"
        serve = try Self.start(endpoint: endpoint, data: disk.mountpoint, durability: durability, log: firstLog)
        try waitUntilServing(["books"], at: endpoint) { (try? String(contentsOfFile: firstLog, encoding: .utf8)) ?? "" }
        writers = try ChildProcess("/usr/bin/python3", [
            PowerLossServeTests.writersScript, "--broker", endpoint, "--partitions", "1", "--writers", "4",
            "--acks", directory.path + "/acks", "--progress", directory.path + "/progress",
        ])
    }

    /// Creates acknowledged so far (the writers' progress file, rewritten every 200 ms).
    var acknowledged: Int {
        // The file appears with the first acknowledgement: none before it.
        Int(((try? String(contentsOfFile: directory.path + "/progress", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// The log of the latest start (empty until the process writes it).
    var log: String { (try? String(contentsOfFile: directory.path + "/serve-\(starts).log", encoding: .utf8)) ?? "" }

    func awaitAcknowledgements(_ count: Int) throws {
        guard eventually({ acknowledged >= count }) else {
            throw FilesystemError(description: "only \(acknowledged) creates acknowledged, waiting for \(count)\n\(writers.standardError)\n\(log)")
        }
    }

    /// The power back on: the disk mounted again and serve started on it.
    func restart() throws {
        try disk.mount()
        starts += 1
        serve = try Self.start(endpoint: endpoint, data: disk.mountpoint, durability: durability, log: directory.path + "/serve-\(starts).log")
        try waitUntilServing(["books"], at: endpoint) { self.log }
    }

    /// Stops the writers; they read every learner's books back and count what was lost.
    func finish() throws -> Outcome {
        writers.send(SIGTERM)
        guard writers.waitForExit() == 0,
              let outcome = try? JSONDecoder().decode(Outcome.self, from: Data(writers.standardOutput.utf8)) else {
            throw FilesystemError(description: "the writers failed: \(writers.standardOutput)\n\(writers.standardError)")
        }
        return outcome
    }

    func stop() {
        writers.stop()
        serve.stop()
        disk.unmount()
        directory.remove()
    }

    private static func start(endpoint: String, data: String, durability: String, log: String) throws -> LyceumProcess {
        try LyceumProcess(["serve", "--endpoint", endpoint, "--data", data, "--durability", durability,
                           "--events-endpoint", try freeLoopbackEndpoint(), "--snapshot-endpoint", try freeLoopbackEndpoint()],
                          standardErrorFile: log)
    }
}
