import Foundation
import LyceumTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private tmux server, on its own socket and without any configuration file, that runs a
/// command in a real pseudo-terminal and shows what the terminal displays. Its server is killed
/// when it is released.
///
/// tmux is started with `posix_spawn`, not Foundation's `Process`: on Linux, `Process` learns
/// that a child ended only when every holder of a socket it lets the child inherit has closed
/// it, and the server that `tmux new-session` forks into the background keeps that socket open,
/// so `Process` would report the finished client as running forever.
final class TmuxServer {
    static let executable = "/usr/bin/tmux"

    /// A scratch directory of this server's, removed with it.
    let directory: URL
    private let socket: String

    /// A server that is started by the first ``run(_:)``.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lyceum-tmux-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("socket").path
    }

    deinit {
        do { _ = try run(["kill-server"]) } catch { Issue.record("cannot stop the tmux server: \(error)") }
        do { try FileManager.default.removeItem(at: directory) } catch { Issue.record("cannot remove \(directory.path): \(error)") }
    }

    /// Runs one tmux command (or several separated by `;`) against this server and returns what
    /// it printed.
    /// - Throws: when tmux cannot be started, fails, or takes more than `timeout`.
    @discardableResult
    func run(_ arguments: [String], timeout: Duration = .seconds(10)) throws -> String {
        let output = directory.appendingPathComponent("output")
        let argv = [Self.executable, "-S", socket, "-f", "/dev/null"] + arguments
        // The server inherits this environment: a known terminal type, and no outer tmux.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TMUX") }
        environment["TERM"] = "xterm"
        let envp = environment.map { "\($0.key)=\($0.value)" }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // The test runner's signal mask and ignored signals would be inherited by the server.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pid: pid_t = 0
        let status = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envpPointers in posix_spawn(&pid, Self.executable, &actions, &attributes, argvPointers, envpPointers) }
        }
        guard status == 0 else { throw TestFailure("tmux \(arguments) could not start: error \(status)") }
        var exitStatus: Int32 = 0
        let exited = eventually(timeout: timeout) { waitpid(pid, &exitStatus, WNOHANG) == pid }
        guard exited else {
            kill(pid, SIGKILL)
            waitpid(pid, &exitStatus, 0)
            throw TestFailure("tmux \(arguments) did not finish within \(timeout)")
        }
        let printed = String(decoding: try Data(contentsOf: output), as: UTF8.self)
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        guard exitStatus & 0x7F == 0, (exitStatus >> 8) & 0xFF == 0 else {
            throw TestFailure("tmux \(arguments) failed with wait status \(exitStatus): \(printed)")
        }
        return printed
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
}
