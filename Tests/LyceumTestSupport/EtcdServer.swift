import Foundation

/// A real single-member etcd (Debian's etcd-server) on free loopback ports, its data in a
/// temporary directory; killed and its directory removed by `remove()`.
public final class EtcdServer {
    /// The client port (`endpoint`).
    public let clientPort: Int
    /// The peer port.
    public let peerPort: Int
    /// Its data directory's parent.
    public let directory: TemporaryDirectory
    private var process: ChildProcess?

    /// Debian's etcd-server.
    public static let executable = "/usr/bin/etcd"

    /// Starts a member on free ports, and waits until it answers.
    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw POSIXError(.ENOENT, userInfo: [NSLocalizedDescriptionKey: "etcd is not installed: scripts/ensure-deps.sh test installs etcd-server"])
        }
        clientPort = try freeLoopbackPorts(count: 2)
        peerPort = clientPort + 1
        directory = try TemporaryDirectory()
        try start()
    }

    /// `http://127.0.0.1:PORT`.
    public var endpoint: String { "http://127.0.0.1:\(clientPort)" }

    /// Starts (or restarts, on the same ports and data) the member and waits until it answers.
    public func start() throws {
        let peer = "http://127.0.0.1:\(peerPort)"
        process = try ChildProcess(Self.executable, [
            "--name", "test", "--data-dir", directory.path + "/member",
            "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", "test=\(peer)", "--log-outputs", "stderr", "--logger", "zap",
        ], standardError: .discarded)
        let ready = eventually { Self.answers(endpoint) }
        guard ready else { throw POSIXError(.ETIMEDOUT, userInfo: [NSLocalizedDescriptionKey: "etcd at \(endpoint) did not answer"]) }
    }

    /// Kills the member at once (SIGKILL), as a crash would.
    public func kill() {
        process?.stop()
        process = nil
    }

    /// Kills it and removes its data.
    public func remove() {
        kill()
        directory.remove()
    }

    /// Whether a range request gets an answer (etcd has a leader and serves).
    private static func answers(_ endpoint: String) -> Bool {
        let range = ["-sf", "-m", "2", "-o", "/dev/null", "-d", #"{"key":"AA=="}"#, endpoint + "/v3/kv/range"]
        return (try? ChildProcess.run("/usr/bin/curl", range, standardError: .discarded).status) == 0
    }
}
