import Glibc
import LyceumLifecycle
import LyceumLogging
import LyceumSupport
import ZeroMQ

/// The process's ZAP handler (RFC 27): answers libzmq's authentication requests for every
/// socket of one ``Context`` whose security asks for them (CURVE servers), with a decision
/// function.
///
/// libzmq 4.3.4 lets every peer in when no handler is bound, so this service must be ready
/// before any CURVE server socket binds and must outlive them: run it first in the process's
/// ``ComponentGroup`` (which waits for ``waitUntilReady(timeout:)`` before starting the next
/// service, and stops services in reverse order).
public final class ZAPHandler: Component, ReadinessReporting {
    /// The endpoint libzmq sends a context's ZAP requests to.
    public static let endpoint = "inproc://zeromq.zap.01"

    private let context: Context
    private let decide: @Sendable (ZAPRequest) -> ZAPDecision
    private let wakeup: WakeupPipe
    private let bound = AwaitedResult<Void, ZMQError>()
    private let logger = Logger(component: "zap")

    /// A handler for `context`'s sockets that answers each request with `decide`, which must be
    /// quick: every handshake of the process waits for it in turn.
    public init(context: Context, decide: @escaping @Sendable (ZAPRequest) -> ZAPDecision) throws(ZMQError) {
        self.context = context
        self.decide = decide
        wakeup = try WakeupPipe()
    }

    /// Binds ``endpoint``, then answers requests until ``shutdown()``.
    /// - Throws: `ZMQError` when the endpoint cannot be bound (another handler has it) or the
    ///   context is terminated.
    public func run() throws {
        let socket: Socket
        do {
            socket = try context.socket(.reply)
            try socket.set(.linger, to: 0)
            try socket.bind(Self.endpoint)
        } catch {
            bound.settle(.failure(error))
            throw error
        }
        bound.settle(.success(()))
        defer { socket.close() }
        var waiter = try SocketWaiter(sockets: [socket], fileDescriptors: [wakeup.fileDescriptor])
        while !waiter.descriptorIsReadable(0) {
            try waiter.wait(timeout: .seconds(1), checkingFirst: true)
            while let frames = try socket.receiveMultipart(options: .dontWait) {
                try socket.send(multipart: answer(frames), options: [])
            }
        }
    }

    /// Stops answering; `run()` returns and the endpoint is released.
    public func shutdown() { wakeup.signal() }

    /// Waits until `run()` has bound ``endpoint``.
    public func waitUntilReady(timeout: Duration) throws {
        guard let result = bound.wait(timeout: timeout) else {
            throw ZMQError(code: .init(rawValue: ETIMEDOUT), operation: "ZAP handler bind (not ready in time)", endpoint: Self.endpoint)
        }
        try result.get()
    }

    /// The reply frames for one request's frames: version, request id, status code, status
    /// text, user id, metadata.
    package func answer(_ frames: [[UInt8]]) -> [[UInt8]] {
        let requestID = frames.count > 1 ? frames[1] : []
        guard frames.count >= 6, frames[0] == Array("1.0".utf8) else {
            logger.log(.error, "malformed ZAP request", ["frames": String(frames.count)])
            return Self.reply(requestID, status: "500", text: "malformed request", userID: "")
        }
        let request = ZAPRequest(
            domain: String(decoding: frames[2], as: UTF8.self), address: String(decoding: frames[3], as: UTF8.self),
            mechanism: String(decoding: frames[5], as: UTF8.self), credentials: Array(frames.dropFirst(6)))
        switch decide(request) {
        case .allow(let userID):
            return Self.reply(requestID, status: "200", text: "OK", userID: userID)
        case .deny(let reason):
            logger.log(.warning, "connection refused", ["domain": PeerText.excerpt(frames[2]), "peer": request.address,
                                                        "mechanism": PeerText.excerpt(frames[5]), "reason": reason])
            return Self.reply(requestID, status: "400", text: "not authorised", userID: "")
        }
    }

    private static func reply(_ requestID: [UInt8], status: String, text: String, userID: String) -> [[UInt8]] {
        [Array("1.0".utf8), requestID, Array(status.utf8), Array(text.utf8), Array(userID.utf8), []]
    }
}
