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

/// A program started by a test, its output going to files, reaped by this type alone.
///
/// Not Foundation's `Process`: with several children ending at once, its termination
/// monitoring lost one here (the child stayed a zombie, `isRunning` stayed true, and
/// `waitUntilExit` never returned), which hung the suite; `waitpid` on the child's own pid cannot
/// miss it. The program starts as from a shell: no signal blocked (the test runner's threads
/// block SIGINT and SIGTERM, and bash could never unblock them) and both at their default actions
/// (bash cannot trap a signal ignored when it starts). It leads a process group of its own, so
/// that ``send(_:)`` reaches it and its children together, as a terminal's Ctrl-C does.
final class Command: @unchecked Sendable {
    // `status` is written by whichever thread reaps the child, under `lock`.
    private let lock = NSLock()
    private var status: Int32?
    private let outputPath: String
    private let errorPath: String
    /// The child's process id.
    let processIdentifier: pid_t

    /// Starts `executable` with `arguments`, `environment` added to this process's.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let base = NSTemporaryDirectory() + "cluster-command-" + UUID().uuidString
        outputPath = base + ".out"
        errorPath = base + ".err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        processIdentifier = pid
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
    func waitForLine(startingWith prefix: String, timeout: Duration) -> Bool {
        eventually(timeout: timeout) { standardOutput.split(separator: "\n").contains { $0.hasPrefix(prefix) } }
    }

    /// Sends `signal` to its process group (if it still runs).
    func send(_ signal: Int32) {
        if reap(blocking: false) == nil { kill(-processIdentifier, signal) }
    }

    /// Its exit status (128 + the signal when a signal ended it) once it ended within `timeout`.
    func waitForExit(timeout: Duration) -> Int32? {
        var status: Int32?
        _ = eventually(timeout: timeout) {
            status = reap(blocking: false)
            return status != nil
        }
        return status
    }

    /// Kills it and its process group if it still runs, and reaps it.
    func stop() {
        guard reap(blocking: false) == nil else { return }
        kill(-processIdentifier, SIGKILL)
        _ = reap(blocking: true)
    }

    private func reap(blocking: Bool) -> Int32? {
        lock.withLock {
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(processIdentifier, &raw, blocking ? 0 : WNOHANG) == processIdentifier else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
            let signal = raw & 0x7f
            status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            return status
        }
    }
}
