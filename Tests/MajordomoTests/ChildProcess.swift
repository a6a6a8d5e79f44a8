import Foundation
import Testing

/// A process a test started: its stdout lines are collected, and it is always killed by
/// ``stop()`` or when released.
final class ChildProcess: @unchecked Sendable {
    // Foundation's Process and the line buffer are touched from the readability handler's
    // thread and the test's; `lock` guards the buffer.
    private let process = Process()
    private let lock = NSLock()
    private var output = ""
    /// Whether the process's stdout reached its end, so that ``lines`` holds all it printed.
    private var outputEnded = false

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                self.lock.withLock { self.outputEnded = true }
                return
            }
            self.lock.withLock { self.output += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    deinit { stop() }

    var processIdentifier: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// Lines printed so far.
    var lines: [String] { lock.withLock { output.split(separator: "\n").map(String.init) } }

    /// Waits until a line starting with `prefix` has been printed `count` times in all.
    func waitForLine(_ prefix: String, count: Int = 1, timeout: Duration = .seconds(10)) -> String? {
        var found: String?
        _ = eventually(timeout: timeout) {
            let matching = lines.filter { $0.hasPrefix(prefix) }
            if matching.count >= count { found = matching[count - 1] }
            return found != nil
        }
        return found
    }

    /// Sends `signal` and waits for the process to end.
    func signal(_ signal: Int32, timeout: Duration = .seconds(5)) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        if !eventually(timeout: timeout, { !process.isRunning }) {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// Kills the process if it still runs.
    func stop() { signal(SIGKILL) }

    /// Waits for the process to exit by itself, and for its last lines to be read.
    func waitForExit(timeout: Duration = .seconds(30)) -> Int32? {
        guard eventually(timeout: timeout, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        // The readability handler may still hold the last lines when the exit is seen.
        _ = eventually(timeout: .seconds(5)) { lock.withLock { outputEnded } }
        return process.terminationStatus
    }

    /// Where `swift build` put the test's executables.
    static let productsDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

    /// mdp-peer, built as a dependency of the test target.
    static func peer(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(productsDirectory.appendingPathComponent("mdp-peer"), arguments)
    }

    /// The Python peer, run by Debian's interpreter, which has pyzmq.
    static func python(_ arguments: [String]) throws -> ChildProcess {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers/mdp_peer.py")
        return try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), [script.path] + arguments)
    }

    /// Whether /usr/bin/python3 can import zmq (`scripts/ensure-deps.sh test` installs it).
    static let pythonHasZMQ: Bool = {
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        check.arguments = ["-c", "import zmq"]
        check.standardError = FileHandle.nullDevice
        do { try check.run() } catch { return false }
        check.waitUntilExit()
        return check.terminationStatus == 0
    }()
}
