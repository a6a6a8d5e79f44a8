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

/// Runs a program to completion with both outputs collected, killing it at a time limit so a
/// test never hangs on it. The program starts as from a shell, no signal blocked and SIGINT and
/// SIGTERM at their default actions: Foundation's `Process` would hand it the spawning thread's
/// mask, in which the test runner blocks both, and neither the script nor the daemons it leaves
/// running could then be stopped by them (a signal ignored at bash's start cannot be trapped
/// either, so the actions are reset too).
enum Command {
    /// Clears the signal mask, restores SIGINT's and SIGTERM's default actions, then becomes
    /// the program (`argv[1:]`): `python3 -c` this.
    static let unblockSignalsAndExec = """
        import os, signal, sys
        for number in (signal.SIGINT, signal.SIGTERM): signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execv(sys.argv[1], sys.argv[1:])
        """

    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", unblockSignalsAndExec, executable] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        // Read both pipes to their ends on threads of their own, so a chatty program never blocks
        // on a full pipe while we wait for it.
        let standardOutput = ThreadResult("stdout") { output.fileHandleForReading.readDataToEndOfFile() }
        let standardError = ThreadResult("stderr") { errors.fileHandleForReading.readDataToEndOfFile() }
        try process.run()
        let exited = eventually(timeout: timeout) { !process.isRunning }
        if !exited { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        // Closing our write ends (Process did) and the child's lets the readers finish; a
        // grandchild that kept the pipe open is given a bound too.
        let out = (try? standardOutput.value(within: .seconds(10))) ?? Data()
        let err = (try? standardError.value(within: .seconds(10))) ?? Data()
        return CommandResult(status: exited ? process.terminationStatus : nil,
                             standardOutput: String(decoding: out, as: UTF8.self),
                             standardError: String(decoding: err, as: UTF8.self))
    }
}
