import Foundation
import LyceumTestSupport

/// What a finished command printed and how it ended.
struct CommandResult: CustomStringConvertible {
    /// Its exit status, or `nil` when it was killed for running past its time limit.
    let status: Int32?
    let standardOutput: String
    let standardError: String

    /// Whether it exited 0.
    var succeeded: Bool { status == 0 }

    var description: String {
        "exit \(status.map(String.init) ?? "none (killed at its time limit)")\nstdout:\n\(standardOutput)\nstderr:\n\(standardError)"
    }
}

/// A program started by a test (a ``ChildProcess``), its output going to files, so that the
/// daemons a script leaves behind never hold a pipe of the test's open. It leads a process group
/// of its own, so that ``send(_:)`` reaches it and its children together, as a terminal's Ctrl-C does.
final class Command: @unchecked Sendable {
    private let child: ChildProcess
    private let outputPath: String
    private let errorPath: String
    /// The child's process id.
    var processIdentifier: pid_t { child.processIdentifier }

    /// Starts `executable` with `arguments`, `environment` added to this process's.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let base = NSTemporaryDirectory() + "cluster-command-" + UUID().uuidString
        outputPath = base + ".out"
        errorPath = base + ".err"
        child = try ChildProcess(
            executable, arguments, environment: environment, standardOutput: .file(outputPath), standardError: .file(errorPath),
            writableInput: false, processGroup: true)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
    }

    /// Runs a program to completion, killing it at `timeout` so a test never hangs on it.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration) throws -> CommandResult {
        let command = try Command(executable, arguments, environment: environment)
        let status = command.waitForExit(timeout: timeout)
        if status == nil { command.stop() }
        return CommandResult(status: status, standardOutput: command.standardOutput, standardError: command.standardError)
    }

    /// What it printed on stdout so far.
    var standardOutput: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    /// What it printed on stderr so far.
    var standardError: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Waits until a stdout line starts with `prefix`; whether one did within `timeout`.
    func waitForLine(startingWith prefix: String, timeout: Duration = .hangLimit) -> Bool {
        eventually(timeout: timeout) { standardOutput.split(separator: "\n").contains { $0.hasPrefix(prefix) } }
    }

    /// Sends `signal` to its process group (if it still runs).
    func send(_ signal: Int32) { child.send(signal) }

    /// Its exit status (128 + the signal when a signal ended it) once it ended within `timeout`.
    func waitForExit(timeout: Duration = .hangLimit) -> Int32? { child.waitForExit(timeout: timeout) }

    /// Kills it and its process group if it still runs, and reaps it.
    func stop() { child.stop() }
}
