import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The real `lyceum` executable running as a child process (a ``ChildProcess``): its stdout and
/// stderr are collected (stderr optionally into a file instead, for tests that make it write a
/// lot); it is always killed by `stop()` or when released, so a failing test leaves nothing behind.
public final class LyceumProcess: ChildProcess, @unchecked Sendable {
    /// Starts `lyceum` with `arguments`. A non-empty `launcher` (e.g. `["/usr/bin/prlimit",
    /// "--nofile=1024:1024", "--"]`) runs first and must exec `lyceum` in its own process, so
    /// that ``processIdentifier`` is `lyceum`'s. With `standardErrorFile`, stderr is written to
    /// that file (created or truncated) and ``standardError`` stays empty.
    public init(_ arguments: [String], launcher: [String] = [], standardErrorFile: String? = nil) throws {
        let command = launcher + [Self.executable.path] + arguments
        try super.init(command[0], Array(command.dropFirst()), standardError: standardErrorFile.map { .file($0) } ?? .collected)
    }

    /// `lyceum`, beside the test bundle where `swift build` put it.
    public static let executable = productsDirectory.appendingPathComponent("lyceum")

    /// Runs `lyceum` with `arguments` to completion (killed at the hang limit `timeout`).
    public static func run(_ arguments: [String], timeout: Duration = .hangLimit) throws -> (status: Int32?, stdout: String, stderr: String) {
        let finished = try ChildProcess.run(executable.path, arguments, timeout: timeout)
        return (finished.status, finished.standardOutput, finished.standardError)
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

/// A loopback TCP port that was free a moment ago, chosen as ``freeLoopbackEndpoint()`` chooses one.
public func freeLoopbackPort() throws -> Int {
    try freeLoopbackPorts(count: 1)
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
