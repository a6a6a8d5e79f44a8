import Foundation
import Majordomo
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// The real `lyceum` executable running as a child process. Its stdout and stderr are collected;
/// it is always killed by `stop()` or when released, so a failing test leaves nothing behind.
final class LyceumProcess: @unchecked Sendable {
    // Foundation's Process and the buffers are touched from the pipes' handler threads and the
    // test's; `lock` guards the buffers.
    private let process = Process()
    private let lock = NSLock()
    private var collected = (stdout: "", stderr: "")

    /// Starts `lyceum` with `arguments`, with at most `descriptorLimit` open descriptors (soft
    /// and hard, through `prlimit`) when it is given.
    init(_ arguments: [String], descriptorLimit: Int? = nil) throws {
        if let descriptorLimit {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments = ["--nofile=\(descriptorLimit):\(descriptorLimit)", Self.executable.path] + arguments
        } else {
            process.executableURL = Self.executable
            process.arguments = arguments
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            self?.lock.withLock { self?.collected.stdout += text }
        }
        errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            self?.lock.withLock { self?.collected.stderr += text }
        }
        try process.run()
    }

    deinit { stop() }

    /// What the process printed on stdout so far.
    var standardOutput: String { lock.withLock { collected.stdout } }
    /// What the process logged on stderr so far.
    var standardError: String { lock.withLock { collected.stderr } }
    var isRunning: Bool { process.isRunning }
    /// The process's id, e.g. to read /proc or change its limits.
    var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `signal`; waits up to `timeout` for the exit, then kills.
    /// - Returns: the exit status, or `nil` if the process had to be killed.
    @discardableResult
    func signal(_ signal: Int32, timeout: Duration = .seconds(10)) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        guard waitUntil(timeout: timeout, { !process.isRunning }) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Sends `signal` without waiting, e.g. SIGHUP.
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Kills the process if it still runs.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the process to exit by itself; `nil` after `timeout`.
    func waitForExit(timeout: Duration = .seconds(20)) -> Int32? {
        guard waitUntil(timeout: timeout, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        // The pipes' last bytes may still be in flight to the handlers.
        Thread.sleep(forTimeInterval: 0.05)
        return process.terminationStatus
    }

    /// Where `swift build` put the test bundle, and so `lyceum`.
    static let productsDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    static let executable = productsDirectory.appendingPathComponent("lyceum")

    /// Runs `lyceum` with `arguments` to completion.
    static func run(_ arguments: [String], timeout: Duration = .seconds(20)) throws -> (status: Int32?, stdout: String, stderr: String) {
        let child = try LyceumProcess(arguments)
        let status = child.waitForExit(timeout: timeout)
        return (status, child.standardOutput, child.standardError)
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes.
func waitUntil(timeout: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return try condition()
}

/// A loopback TCP endpoint on a port that was free a moment ago: bound to port 0 by the kernel,
/// then closed. Another process could take it in between; the ephemeral range makes that rare.
func freeLoopbackEndpoint() throws -> String {
    try LoopbackListener().endpoint
}

/// A TCP socket listening on a loopback port the kernel chose, until released.
final class LoopbackListener {
    let endpoint: String
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        self.fd = fd
        endpoint = "tcp://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
    }

    deinit { close(fd) }
}

/// A temporary directory for one test's data, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "lyceum-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            print("could not remove \(path): \(error)")
        }
    }
}
