import Foundation
import Majordomo
import ZeroMQ

/// The source's connection for a move's requests to another node's service, through a broker:
/// one Majordomo client, used by one request at a time. Every request of a move may be retried
/// (a repeated `begin` starts the copy over, a repeated chunk, `finish` or `adopt` changes
/// nothing), so the client's resend on a timeout is safe.
final class NodeCaller: @unchecked Sendable {
    // `lock` guards `client`, which is not thread-safe; @unchecked because the compiler cannot see that.
    private let lock = NSLock()
    private let client: Client
    private let context: Context

    /// A caller through the broker at `endpoint`. The time limit covers the slowest request, an
    /// `adopt`, which replays the partition's journal before it answers.
    init(endpoint: String, security: SocketSecurity, timeout: Duration = .seconds(60)) throws {
        context = try Context()
        var configuration = ClientConfiguration(timeout: timeout, attempts: 3)
        configuration.security = security
        client = Client(endpoint: endpoint, configuration: configuration, context: context)
    }

    deinit { client.close() }

    /// Sends `frames` to `service` and returns the reply's frames.
    /// - Throws: `MajordomoError` when no reply comes within the attempts.
    func call(_ service: String, _ frames: [[UInt8]]) throws -> [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        return try client.call(service, body: frames)
    }
}
