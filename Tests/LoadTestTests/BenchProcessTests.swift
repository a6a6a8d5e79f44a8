import Foundation
import JSON
import LoadTest
import LyceumTestSupport
import Testing

/// A program built beside the test bundle, run to completion with its output collected.
enum BuiltProgram {
    /// How it ended and what it printed.
    typealias Outcome = ChildProcess.Finished

    /// Runs `executable` (a path, or a product's name) with `arguments` and `environment` added.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    currentDirectory: URL? = nil) throws -> Outcome {
        try ChildProcess.run(
            executable.contains("/") ? executable : productsDirectory.appendingPathComponent(executable).path, arguments,
            environment: environment, currentDirectory: currentDirectory?.path)
    }
}

/// Removes a directory a test made; a failure is recorded, not ignored.
func removeTemporary(_ directory: URL) {
    do {
        try FileManager.default.removeItem(at: directory)
    } catch {
        Issue.record("cannot remove \(directory.path): \(error)")
    }
}

@Suite(.serialized) struct BenchProcessTests {
    @Test func jsonOutputParsesAndPlots() throws {
        let fake = try FakeLyceum()
        defer { fake.stop() }
        let outcome = try BuiltProgram.run("lyceum", ["bench", "--broker", fake.endpoint, "--scenario", "book-read=4,catalog-read=1",
                                                      "--requests", "300", "--warmup", "0s", "--books", "20", "--verify",
                                                      "--label", "fake", "--json"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let json = try JSONParser().parse(outcome.standardOutput)
        #expect(json["requests"] == .integer(300))
        #expect(json["errors"] == .object(JSONObject()))
        #expect(json["verify"] == .bool(true))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lyceum-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { removeTemporary(directory) }
        let results = directory.appendingPathComponent("run.json")
        try Data(outcome.standardOutput.utf8).write(to: results)
        let chart = directory.appendingPathComponent("chart.svg").path
        let plot = try BuiltProgram.run("lyceum", ["bench", "plot", chart, results.path, results.path])
        #expect(plot.status == 0, "\(plot.standardError)")
        #expect(try String(contentsOfFile: chart, encoding: .utf8).contains("<polyline"))
    }

    @Test func aLyingServerFailsTheRun() throws {
        let fake = try FakeLyceum(behaviour: .lying)
        defer { fake.stop() }
        let outcome = try BuiltProgram.run("lyceum", ["bench", "--broker", fake.endpoint, "--scenario", "book-read",
                                                      "--requests", "50", "--warmup", "0s", "--books", "5", "--verify"])
        #expect(outcome.status == 1)
        #expect(outcome.standardOutput.contains("wrong_reply 50"), "\(outcome.standardOutput)")
        #expect(outcome.standardOutput.contains("wrong reply: book.title"))
    }

    @Test(arguments: [(["--rate", "-5"], "--rate: invalid_option"), (["--in-flight"], "--in-flight: needs a value"),
                      (["--scenario", "nothing"], "--scenario: invalid_option"), (["--duration", "ten"], "--duration: expected a duration"),
                      (["--frobnicate"], "unknown flag --frobnicate"), (["--connections", "8", "--in-flight", "4"], "--in-flight: invalid_option"),
                      (["--duration", "1s", "--requests", "5"], "--requests: excludes --duration"),
                      (["--server-pid", "0"], "--server-pid"), (["--server-pid", "2147483647"], "--server-pid: file path=/proc/2147483647/stat"),
                      (["--list-page", "2"], "--list-page: invalid_option: applies only to the book-list scenario"),
                      (["--scenario", "book-list", "--list-sort", "popularity"], "--list-sort: invalid_option")])
    func badOptionsAreRefusedWithStatusTwoNamingTheOption(_ options: [String], named: String) throws {
        let outcome = try BuiltProgram.run("lyceum", ["bench", "--broker", "tcp://127.0.0.1:1"] + options)
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains(named), "\(outcome.standardError)")
    }

    @Test func anUnreachableServerIsASetupFailure() throws {
        let outcome = try BuiltProgram.run("lyceum", ["bench", "--broker", "tcp://127.0.0.1:1", "--timeout", "300ms"])
        #expect(outcome.status == 3, "\(outcome.standardError)")
    }
}
