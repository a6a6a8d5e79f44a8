import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program a test started: the one way the suites start processes (`LyceumProcess` is this for
/// the `lyceum` executable). Its output is collected, discarded or written to a file; it is
/// reaped by this type alone and always killed by ``stop()`` or when released, so that a failing
/// test leaves nothing running.
///
/// Started with `posix_spawn`, not Foundation's `Process`: on Linux, `Process` learns that a
/// child ended only when every holder of a descriptor it let the child inherit has closed it (a
/// daemon the child forked keeps it open, and `isRunning` stays true), and with several children
/// ending at once its termination monitoring lost one (`waitUntilExit` never returned); `waitpid`
/// on the child's own pid cannot miss it. The child inherits no descriptor but its three standard
/// ones, and starts as from a shell: no signal blocked (the test runner's threads block some)
/// and every signal at its default action.
open class ChildProcess: @unchecked Sendable {
    /// Where the child's standard output or standard error goes.
    public enum Destination: Sendable {
        /// A pipe, read to its end by a thread of this process: ``standardOutput``, ``standardError``.
        case collected
        /// `/dev/null`.
        case discarded
        /// The file at this path, created or truncated.
        case file(String)
        /// Standard error only: wherever standard output goes (`2>&1`).
        case standardOutput
    }

    /// The child's process id.
    public let processIdentifier: pid_t
    /// Whether the child leads a process group of its own, which ``send(_:)`` signals as a whole.
    public let leadsProcessGroup: Bool
    private struct State {
        var output: [UInt8] = []
        var errors: [UInt8] = []
        /// The collected pipes whose end has not been read yet.
        var openPipes = 0
        /// The wait status, once reaped.
        var waitStatus: Int32?
    }
    // Written by the readers' threads and whichever thread reaps; read by the test's.
    private let state = Mutex(State())
    private let input: Int32?

    /// Starts `executable` with `arguments`, in `currentDirectory` when given, with this
    /// process's environment changed by `environment` (a `nil` value removes the variable). Its
    /// standard input is a pipe that ``send(line:)`` writes to and that stays open until the
    /// child is released (scripts that hold their connections until their input ends rely on
    /// it), or `/dev/null` without `writableInput`. With `processGroup`, the child leads a
    /// process group of its own.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:], currentDirectory: String? = nil,
        standardOutput: Destination = .collected, standardError: Destination = .collected, writableInput: Bool = true,
        processGroup: Bool = false
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The parent's ends of the pipes, closed on exec: only the dup2'ed copies reach the child.
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        func pipeEnds() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return (ends[0], ends[1])
        }
        if writableInput {
            let ends = try pipeEnds()
            parentEnds.append(ends.write)
            childEnds.append(ends.read)
            posix_spawn_file_actions_adddup2(&actions, ends.read, 0)
            input = ends.write
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            input = nil
        }
        var readers: [(descriptor: Int32, errors: Bool)] = []
        for (descriptor, destination) in [(Int32(1), standardOutput), (Int32(2), standardError)] {
            switch destination {
            case .collected:
                let ends = try pipeEnds()
                childEnds.append(ends.write)
                readers.append((ends.read, descriptor == 2))
                posix_spawn_file_actions_adddup2(&actions, ends.write, descriptor)
            case .discarded:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .standardOutput:
                posix_spawn_file_actions_adddup2(&actions, 1, descriptor)
            }
        }
        // Nothing else of the test process (other children's pipes, sockets) reaches the child.
        _ = GNUSpawnActions.closeFrom(&actions, 3)
        if let currentDirectory { _ = GNUSpawnActions.changeDirectory(&actions, currentDirectory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if processGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            (parentEnds + readers.map(\.descriptor)).forEach { close($0) }
            throw ChildProcessError(executable: executable, code: spawned)
        }
        processIdentifier = pid
        leadsProcessGroup = processGroup
        state.withLock { $0.openPipes = readers.count }
        for reader in readers { collect(reader.descriptor, errors: reader.errors) }
    }

    /// Starts the executable at `executable` (see the main initializer).
    public convenience init(_ executable: URL, _ arguments: [String]) throws {
        try self.init(executable.path, arguments)
    }

    deinit {
        stop()
        if let input { close(input) }
    }

    /// Appends what `descriptor` delivers to the output or the errors, until its end, on a thread
    /// of its own: a Dispatch handler would run on the global queue, which the suite's blocking
    /// tests can hold for minutes, so the output would come after the test gave up waiting.
    private func collect(_ descriptor: Int32, errors: Bool) {
        // Weak: a child released unstopped is killed by `deinit`, which ends the pipe and the thread.
        let thread = Thread { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard let self else { break }
                self.state.withLock { state in
                    if count > 0 {
                        if errors { state.errors += buffer[0..<count] } else { state.output += buffer[0..<count] }
                    } else {
                        state.openPipes -= 1
                    }
                }
                if count <= 0 { break }
            }
            close(descriptor)
        }
        thread.name = "child-output"
        thread.start()
    }

    /// What the child printed on its standard output so far (when it is collected).
    public var standardOutput: String { String(decoding: standardOutputBytes, as: UTF8.self) }
    /// The bytes of ``standardOutput``.
    public var standardOutputBytes: [UInt8] { state.withLock { $0.output } }
    /// What the child printed on its standard error so far (when it is collected).
    public var standardError: String { state.withLock { String(decoding: $0.errors, as: UTF8.self) } }

    /// The lines printed on standard output so far: complete lines only, plus the last one once
    /// the output has ended.
    public var lines: [String] {
        let (output, ended) = state.withLock { ($0.output, $0.openPipes == 0) }
        var lines = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if !ended || lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Waits until a line starting with `prefix` has been printed `count` times in all, and
    /// returns the last of them; `nil` when that did not happen within the hang limit `timeout`.
    public func waitForLine(_ prefix: String, count: Int = 1, timeout: Duration = .hangLimit) -> String? {
        var found: String?
        _ = eventually(timeout: timeout) {
            let matching = lines.filter { $0.hasPrefix(prefix) }
            if matching.count >= count { found = matching[count - 1] }
            return found != nil || !isRunning && state.withLock { $0.openPipes == 0 }
        }
        return found
    }

    /// Writes `line` and a newline to the child's standard input.
    public func send(line: String) {
        guard let input else { preconditionFailure("the child was started without writableInput") }
        let bytes = Array((line + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(input, $0.baseAddress! + written, $0.count - written) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return }
            written += result
        }
    }

    /// Whether it still runs (it is reaped as soon as it is seen to have ended).
    public var isRunning: Bool { reap(blocking: false) == nil }

    /// How it ended: its exit status, or 128 + the signal that ended it (as a shell says);
    /// `nil` while it runs.
    public var exitStatus: Int32? {
        reap(blocking: false).map { status in status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f }
    }

    /// The signal that ended it; `nil` while it runs or when it exited.
    public var endingSignal: Int32? {
        reap(blocking: false).flatMap { status in status & 0x7f == 0 ? nil : status & 0x7f }
    }

    /// Sends `signal` without waiting (to its process group when it leads one), e.g. SIGHUP.
    public func send(_ signal: Int32) {
        guard isRunning else { return }
        kill(leadsProcessGroup ? -processIdentifier : processIdentifier, signal)
    }

    /// Sends `signal` and waits up to the hang limit `timeout` for the exit, then kills.
    /// - Returns: the exit status (``exitStatus``), or `nil` if it had to be killed.
    @discardableResult
    public func signal(_ signal: Int32, timeout: Duration = .hangLimit) -> Int32? {
        send(signal)
        guard eventually(timeout: timeout, { !isRunning }) else {
            stop()
            return nil
        }
        return exitStatus
    }

    /// Stops the child with SIGSTOP and returns once every one of its threads is stopped.
    ///
    /// `kill` returns before a busy machine has scheduled the threads that must act on the
    /// signal; until then the others keep answering, so a test that relies on silence waits.
    /// - Returns: `false` if some thread still ran at the hang limit `timeout`.
    @discardableResult
    public func suspend(timeout: Duration = .hangLimit) -> Bool {
        let tasks = "/proc/\(processIdentifier)/task"
        kill(processIdentifier, SIGSTOP)
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

    /// Kills it (and its process group when it leads one) if it still runs, and reaps it.
    public func stop() {
        guard isRunning else { return }
        kill(leadsProcessGroup ? -processIdentifier : processIdentifier, SIGKILL)
        _ = reap(blocking: true)
    }

    /// Waits for it to exit by itself, and for its collected output to reach its end.
    /// - Returns: its ``exitStatus``, or `nil` if it still ran at the hang limit `timeout`.
    public func waitForExit(timeout: Duration = .hangLimit) -> Int32? {
        guard eventually(timeout: timeout, { !isRunning }) else { return nil }
        // The readers may still hold the last bytes when the exit is seen. Bounded: a child the
        // process left behind may keep a pipe open.
        _ = eventually(timeout: .seconds(60)) { state.withLock { $0.openPipes == 0 } }
        return exitStatus
    }

    /// The wait status once reaped; reaps it when it has ended (or waits for that, `blocking`).
    private func reap(blocking: Bool) -> Int32? {
        state.withLock { state in
            if let status = state.waitStatus { return status }
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(processIdentifier, &status, blocking ? 0 : WNOHANG) } while result < 0 && errno == EINTR
            guard result == processIdentifier else { return nil }
            state.waitStatus = status
            return status
        }
    }

    /// What a program that ran to its end printed, and how it ended.
    public struct Finished: Sendable, CustomStringConvertible {
        /// Its ``exitStatus``, or `nil` when it was killed at the hang limit.
        public let status: Int32?
        /// What it printed on standard output.
        public let standardOutput: String
        /// What it printed on standard error (empty when it went elsewhere).
        public let standardError: String

        /// `exit 0`, then both outputs.
        public var description: String {
            "exit \(status.map(String.init) ?? "none (killed at its hang limit)")\nstdout:\n\(standardOutput)\nstderr:\n\(standardError)"
        }
    }

    /// Runs `executable` to its end (killed at the hang limit `timeout`), as the main
    /// initializer starts it, its standard input `/dev/null`.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:], currentDirectory: String? = nil,
        standardError: Destination = .collected, timeout: Duration = .hangLimit
    ) throws -> Finished {
        let child = try ChildProcess(
            executable, arguments, environment: environment, currentDirectory: currentDirectory, standardError: standardError,
            writableInput: false)
        let status = child.waitForExit(timeout: timeout)
        child.stop()
        return Finished(status: status, standardOutput: child.standardOutput, standardError: child.standardError)
    }
}

/// glibc's file actions that close every descriptor from a number up and change directory (2.34
/// and 2.29), which Swift's Glibc module does not import (they are GNU extensions): looked up once.
private enum GNUSpawnActions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    nonisolated(unsafe) static let closeFrom: CloseFrom = function("posix_spawn_file_actions_addclosefrom_np")
    nonisolated(unsafe) static let changeDirectory: ChangeDirectory = function("posix_spawn_file_actions_addchdir_np")

    private static func function<Function>(_ name: String) -> Function {
        // A nil handle is RTLD_DEFAULT: the process's global symbols.
        guard let symbol = dlsym(nil, name) else {
            fatalError("glibc has no \(name): the tests need glibc 2.34 or later")
        }
        return unsafeBitCast(symbol, to: Function.self)
    }
}

/// A program that could not be started: its path and the error `posix_spawn` gave.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// The program's path.
    public let executable: String
    /// The errno value.
    public let code: Int32

    /// `cannot start /usr/bin/x: No such file or directory`.
    public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
}

extension Duration {
    /// How long a test waits for what should come in moments before it calls it a hang: a limit
    /// for hangs only, never a measure of speed. Minutes, because on a loaded 2-core machine the
    /// suite's backlog can hold a process or a test's thread that long.
    public static let hangLimit: Duration = .seconds(5 * 60)
}

/// Polls `condition` every 20 ms until it holds or the hang limit `timeout` passes.
/// - Returns: whether it held.
public func eventually(timeout: Duration = .hangLimit, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return try condition()
}

extension ChildProcess {
    /// Runs `executable` with `arguments` to completion (killed at the hang limit), its standard
    /// error merged into its output: what a tool such as `systemctl` or `prlimit` said.
    public static func output(of executable: String, _ arguments: [String]) throws -> (status: Int32?, output: String) {
        let finished = try run(executable, arguments, standardError: .standardOutput)
        return (finished.status, finished.standardOutput)
    }
}

/// Awaits `condition` every 50 ms until it holds or the hang limit `timeout` passes: ``eventually(timeout:_:)``
/// for conditions that are asked with `await`.
/// - Returns: whether it held.
public func eventuallyAsync(timeout: Duration = .hangLimit, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        // Cancelled, the wait ends at the next check of the deadline's condition: nothing to report.
        try? await Task.sleep(for: .milliseconds(50))
    }
    return await condition()
}

/// Where `swift build` put the executables the tests run (beside the test bundle).
public let productsDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

/// Whether Debian's /usr/bin/python3 can import pyzmq (`scripts/ensure-deps.sh test` installs it).
public let pythonHasZMQ: Bool = {
    (try? ChildProcess.run("/usr/bin/python3", ["-c", "import zmq"], standardError: .discarded).status) == 0
}()
