import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The real `lyceum` executable running as a child process. Its stdout and stderr are collected
/// (stderr optionally into a file instead, for tests that make it write a lot); it is always
/// killed by `stop()` or when released, so a failing test leaves nothing behind.
public final class LyceumProcess: @unchecked Sendable {
    // Foundation's Process and the buffers are touched from the pipes' handler threads and the
    // test's; `lock` guards the buffers and the count of pipes still open.
    private let process = Process()
    private let lock = NSLock()
    private var collected = (stdout: Data(), stderr: Data())
    /// The pipes whose end has not been read yet, so that the output is known to be whole.
    private var openPipes = 0

    /// Starts `lyceum` with `arguments`. A non-empty `launcher` (e.g. `["/usr/bin/prlimit",
    /// "--nofile=1024:1024", "--"]`) runs first and must exec `lyceum` in its own process, so
    /// that ``processIdentifier`` is `lyceum`'s. With `standardErrorFile`, stderr is written to
    /// that file (created or truncated) and ``standardError`` stays empty.
    public init(_ arguments: [String], launcher: [String] = [], standardErrorFile: String? = nil) throws {
        if let tool = launcher.first {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = Array(launcher.dropFirst()) + [Self.executable.path] + arguments
        } else {
            process.executableURL = Self.executable
            process.arguments = arguments
        }
        process.standardOutput = collect(into: \.stdout)
        if let standardErrorFile {
            guard FileManager.default.createFile(atPath: standardErrorFile, contents: nil),
                  let file = FileHandle(forWritingAtPath: standardErrorFile) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: standardErrorFile])
            }
            process.standardError = file
        } else {
            process.standardError = collect(into: \.stderr)
        }
        try process.run()
    }

    /// A pipe whose bytes are appended to `buffer` as they come, until its end, by a thread of
    /// its own: a readability handler runs on Dispatch's global queue, which the suite's blocking
    /// tests can hold for minutes, so the output would come after the test gave up waiting.
    private func collect(into buffer: WritableKeyPath<(stdout: Data, stderr: Data), Data> & Sendable) -> Pipe {
        let buffer = buffer
        let pipe = Pipe()
        openPipes += 1
        let reader = pipe.fileHandleForReading
        Thread { [weak self] in
            while true {
                let data = reader.availableData
                guard let self else { return }
                lock.withLock {
                    collected[keyPath: buffer].append(data)
                    if data.isEmpty { openPipes -= 1 }
                }
                if data.isEmpty { return }
            }
        }.start()
        return pipe
    }

    deinit { stop() }

    /// What the process printed on stdout so far.
    public var standardOutput: String { lock.withLock { String(decoding: collected.stdout, as: UTF8.self) } }
    /// What the process logged on stderr so far (empty when it goes to a file).
    public var standardError: String { lock.withLock { String(decoding: collected.stderr, as: UTF8.self) } }
    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }
    /// Its process id (`lyceum`'s, also behind a launcher, which execs it).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `signal`; waits up to `timeout` for the exit, then kills.
    /// - Returns: the exit status, or `nil` if the process had to be killed.
    @discardableResult
    public func signal(_ signal: Int32, timeout: Duration = .seconds(10)) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        guard eventually(timeout: timeout, { !process.isRunning }) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Sends `signal` without waiting, e.g. SIGHUP.
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Stops the process with SIGSTOP and returns once every one of its threads is stopped.
    ///
    /// `kill` returns before a busy machine has scheduled the threads that must act on the
    /// signal; until then the others keep answering, so a test that relies on silence waits.
    /// - Returns: `false` if some thread was still running after `timeout`.
    @discardableResult
    public func suspend(timeout: Duration = .seconds(10)) -> Bool {
        let tasks = "/proc/\(process.processIdentifier)/task"
        kill(process.processIdentifier, SIGSTOP)
        return eventually(timeout: timeout) {
            // A process that has exited has no task directory, and is not stopped.
            guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks), !threads.isEmpty else { return false }
            return threads.allSatisfy { Self.isStopped(thread: "\(tasks)/\($0)/stat") }
        }
    }

    /// Whether `/proc/PID/task/TID/stat` says the thread is stopped (`T`); its state is the
    /// field after the parenthesised command name, which may itself hold spaces or `)`.
    private static func isStopped(thread statPath: String) -> Bool {
        guard let stat = FileManager.default.contents(atPath: statPath),
              let close = stat.lastIndex(of: UInt8(ascii: ")")), close + 2 < stat.endIndex else { return false }
        return stat[close + 2] == UInt8(ascii: "T")
    }

    /// Kills the process if it still runs.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the process to exit by itself; `nil` after `timeout`.
    public func waitForExit(timeout: Duration = .seconds(20)) -> Int32? {
        guard eventually(timeout: timeout, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        // The readers may still hold the last bytes when the exit is seen. Bounded: a child the
        // process left behind may keep a pipe open.
        _ = eventually(timeout: .seconds(60)) { lock.withLock { openPipes == 0 } }
        return process.terminationStatus
    }

    /// `lyceum`, beside the test bundle where `swift build` put it.
    public static let executable = productsDirectory.appendingPathComponent("lyceum")

    /// Runs `lyceum` with `arguments` to completion.
    public static func run(_ arguments: [String], timeout: Duration = .seconds(20)) throws -> (status: Int32?, stdout: String, stderr: String) {
        let child = try LyceumProcess(arguments)
        let status = child.waitForExit(timeout: timeout)
        return (status, child.standardOutput, child.standardError)
    }
}

/// A loopback TCP endpoint on a port that was free a moment ago, for a process to bind.
///
/// The port is below the kernel's ephemeral range (`ip_local_port_range`), which every outgoing
/// connection draws its source port from: a port from that range, freed for the process to
/// take, could meanwhile become the source port of one of the suite's many connections. It is
/// chosen at random, checked by binding it, and never handed out twice by this process.
public func freeLoopbackEndpoint() throws -> String {
    "tcp://127.0.0.1:\(try freeLoopbackPorts(count: 1))"
}

/// The first of `count` consecutive loopback ports that were all free a moment ago, chosen and
/// reserved as ``freeLoopbackEndpoint()`` chooses one (for a script that numbers its ports from
/// a base).
public func freeLoopbackPorts(count: Int) throws -> Int {
    let range = PortsBelowTheEphemeralRange.self
    for _ in 0..<1000 {
        let first = Int.random(in: Int(range.lower)...(Int(range.upper) - count))
        let ports = (first..<first + count).map { UInt16($0) }
        let reserved = range.handedOut.withLock { handedOut in
            guard handedOut.isDisjoint(with: ports) else { return false }
            handedOut.formUnion(ports)
            return true
        }
        // A port some process holds fails to bind: try another block (this one stays reserved).
        if reserved, ports.allSatisfy({ (try? LoopbackListener(port: $0)) != nil }) { return first }
    }
    throw POSIXError(.EADDRINUSE)
}

/// Where ``freeLoopbackEndpoint()`` picks ports: from 10000 up to the start of the ephemeral range.
private enum PortsBelowTheEphemeralRange {
    static let lower: UInt16 = 10_000
    static let upper: UInt16 = {
        // "32768\t60999" on Linux by default; the default start when it cannot be read.
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let start = range.split(whereSeparator: \.isWhitespace).first.flatMap { UInt16($0) } ?? 32_768
        return max(start, lower + 1_000)
    }()
    static let handedOut = Mutex<Set<UInt16>>([])
}

/// A TCP socket listening on a loopback port the kernel chose, until released.
public final class LoopbackListener {
    /// `tcp://127.0.0.1:PORT`.
    public let endpoint: String
    private let fd: Int32

    /// Binds `port` (0: one the kernel chooses) and listens, or throws `EMFILE`/`EADDRINUSE`.
    public init(port: UInt16 = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
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
public struct TemporaryDirectory: Sendable {
    /// Its absolute path.
    public let path: String

    /// Creates a new, empty directory under the system's temporary directory.
    public init() throws {
        path = NSTemporaryDirectory() + "lyceum-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Deletes it and everything in it.
    public func remove() {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            print("could not remove \(path): \(error)")
        }
    }
}
