import Foundation

/// A process a test started: its standard output is collected line by line, its standard
/// input can be written to, and it is always killed by ``stop()`` or when released, so that a
/// failing test leaves nothing running.
public final class ChildProcess: @unchecked Sendable {
    // Foundation's Process and the output buffer are touched from the readability handler's
    // thread and the test's; `lock` guards the buffer and `outputEnded`.
    private let process = Process()
    private let input = Pipe()
    private let lock = NSLock()
    private var output = ""
    /// Whether standard output reached its end, so that ``lines`` holds all the process printed.
    private var outputEnded = false

    /// Starts `executable` with `arguments`; its standard error is discarded.
    public init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = input
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

    /// Starts the executable at `path` with `arguments`.
    public convenience init(_ path: String, _ arguments: [String]) throws {
        try self.init(URL(fileURLWithPath: path), arguments)
    }

    deinit { stop() }

    /// The process's id, for sending it signals.
    public var processIdentifier: Int32 { process.processIdentifier }
    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }

    /// The lines printed so far: complete lines only, plus the last one once output has ended.
    public var lines: [String] {
        lock.withLock {
            var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if !outputEnded || lines.last == "" { lines.removeLast() }
            return lines
        }
    }

    /// Waits until a line starting with `prefix` has been printed `count` times in all.
    public func waitForLine(_ prefix: String, count: Int = 1, timeout: Duration = .seconds(10)) -> String? {
        var found: String?
        _ = eventually(timeout: timeout) {
            let matching = lines.filter { $0.hasPrefix(prefix) }
            if matching.count >= count { found = matching[count - 1] }
            return found != nil
        }
        return found
    }

    /// Writes `line` and a newline to the process's standard input.
    public func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Sends `signal` and waits for the process to end, killing it after `timeout`.
    public func signal(_ signal: Int32, timeout: Duration = .seconds(5)) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        if !eventually(timeout: timeout, { !process.isRunning }) {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// Kills the process if it still runs.
    public func stop() { signal(SIGKILL) }

    /// Waits for the process to exit by itself, and for its last lines to be read.
    /// - Returns: its exit status, or `nil` if it still ran after `timeout`.
    public func waitForExit(timeout: Duration = .seconds(30)) -> Int32? {
        guard eventually(timeout: timeout, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        // The readability handler may still hold the last lines when the exit is seen.
        _ = eventually(timeout: .seconds(5)) { lock.withLock { outputEnded } }
        return process.terminationStatus
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes.
/// - Returns: whether it held.
public func eventually(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return try condition()
}

/// Where `swift build` put the executables the tests run (beside the test bundle).
public let productsDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

/// Whether Debian's /usr/bin/python3 can import pyzmq (`scripts/ensure-deps.sh test` installs it).
public let pythonHasZMQ: Bool = {
    let check = Process()
    check.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    check.arguments = ["-c", "import zmq"]
    check.standardError = FileHandle.nullDevice
    do { try check.run() } catch { return false }
    check.waitUntilExit()
    return check.terminationStatus == 0
}()
