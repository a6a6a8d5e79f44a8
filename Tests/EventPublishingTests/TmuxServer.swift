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
/// tmux runs as a `ChildProcess`, not under Foundation's `Process`, which would report the
/// finished client as running for as long as the server it forked kept an inherited socket open.
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
    func run(_ arguments: [String], timeout: Duration = .hangLimit) throws -> String {
        let output = directory.appendingPathComponent("output")
        // The server inherits this environment: a known terminal type, and no outer tmux.
        var environment: [String: String?] = ["TERM": "xterm"]
        for name in ProcessInfo.processInfo.environment.keys where name.hasPrefix("TMUX") { environment[name] = .some(nil) }
        // Output to a file: the server that `tmux new-session` forks must hold no pipe of ours.
        let child = try ChildProcess(
            Self.executable, ["-S", socket, "-f", "/dev/null"] + arguments, environment: environment,
            standardOutput: .file(output.path), standardError: .discarded, writableInput: false)
        guard let status = child.waitForExit(timeout: timeout) else {
            child.stop()
            throw TestFailure("tmux \(arguments) did not finish within \(timeout)")
        }
        let printed = String(decoding: try Data(contentsOf: output), as: UTF8.self)
        guard status == 0 else { throw TestFailure("tmux \(arguments) failed with status \(status): \(printed)") }
        return printed
    }
}
