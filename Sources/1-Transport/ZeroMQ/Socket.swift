import CZMQ
import Glibc

/// A ZeroMQ socket.
///
/// A socket belongs to one thread at a time (libzmq sockets are not thread-safe), which is
/// why this type is not `Sendable`: create it on the thread that uses it. It keeps its
/// ``Context`` alive. Closing is explicit through ``close()`` and also happens when the
/// socket is released. New sockets have a linger of ``defaultLinger`` instead of libzmq's
/// "forever", so that messages still queued at close get a bounded time to be delivered and
/// terminating the context can never hang on an unreachable peer.
public final class Socket {
    /// The context this socket was created in.
    public let context: Context
    /// The socket's messaging pattern.
    public let type: SocketType
    /// Milliseconds that messages queued at close are kept for delivery, unless set otherwise.
    public static let defaultLinger: Int32 = 1000
    private(set) var handle: UnsafeMutableRawPointer?
    /// Endpoints bound or connected and not yet unbound or disconnected, for error reports.
    public private(set) var endpoints: [String] = []
    /// Bytes of every frame sent so far, each counted as its ZMTP 3 frame on the wire
    /// (``wireSize(ofFrame:)``: with CURVE, as its MESSAGE command), routing-id frames
    /// included: with the kernel's count of bytes acknowledged, what libzmq still holds for a peer.
    // Both counters change on every frame; a socket is used from one thread at a time, so the
    // runtime's exclusivity check on each change (about 1% of a broker's CPU) guards nothing.
    @exclusivity(unchecked) public private(set) var wireBytesSent: UInt64 = 0
    /// Bytes of every frame received so far, counted as ``wireBytesSent`` counts them.
    @exclusivity(unchecked) public private(set) var wireBytesReceived: UInt64 = 0
    /// Bytes the security mechanism adds to each frame's body: 0 for NULL, set by
    /// ``secure(_:)`` for CURVE.
    var mechanismOverhead = 0

    init(context: Context, type: SocketType) throws(ZMQError) {
        let handle = try check(zmq_socket(context.handle, type.rawValue), "zmq_socket \(type)")
        self.context = context
        self.type = type
        self.handle = handle
        try set(.linger, to: Self.defaultLinger)
    }

    deinit { close() }

    /// The bytes a frame of `count` bytes takes on this socket's connections: its ZMTP 3
    /// frame, or with CURVE its MESSAGE command's frame.
    public func wireSize(ofFrame count: Int) -> UInt64 {
        ZMTPFrame.wireSize(of: count + mechanismOverhead)
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { handle == nil }

    /// Closes the socket (`zmq_close`); later calls on it fail with `ENOTSOCK`. Closing twice is harmless.
    public func close() {
        guard let handle else { return }
        // A monitor is stopped first: libzmq stops it only when the socket is destroyed, after
        // its linger, and meanwhile its I/O thread sends each lingering connection's events
        // with a blocking send; once the monitor's reader is gone, that send blocks the I/O
        // thread, and with it every socket of the context. Without a monitor it does nothing.
        zmq_socket_monitor(handle, nil, 0)
        // Fails only for a handle that is not an open socket (ENOTSOCK), which the guard rules out.
        zmq_close(handle)
        self.handle = nil
    }

    /// The live handle, or a typed `ENOTSOCK` error naming the operation after ``close()``.
    func open(_ operation: @autoclosure () -> String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else {
            throw ZMQError(code: .init(rawValue: ENOTSOCK), operation: operation())
        }
        return handle
    }

    /// Accepts connections on an endpoint such as `tcp://127.0.0.1:*` (`zmq_bind`).
    /// A `*` port binds a free one; read it back from ``lastEndpoint``.
    public func bind(_ endpoint: String) throws(ZMQError) {
        try check(zmq_bind(try open("bind"), endpoint), "bind", endpoint: endpoint)
        endpoints.append(try lastEndpoint)
    }

    /// Connects to an endpoint (`zmq_connect`); the connection itself is made in the background.
    public func connect(_ endpoint: String) throws(ZMQError) {
        try check(zmq_connect(try open("connect"), endpoint), "connect", endpoint: endpoint)
        endpoints.append(endpoint)
    }

    /// Stops accepting on a bound endpoint (`zmq_unbind`).
    public func unbind(_ endpoint: String) throws(ZMQError) {
        try check(zmq_unbind(try open("unbind"), endpoint), "unbind", endpoint: endpoint)
        endpoints.removeAll { $0 == endpoint }
    }

    /// Unbinds each of `endpoints` (bound endpoints as ``endpoints`` lists them, wildcards
    /// resolved) and binds it again, which ends every connection accepted on it: each peer
    /// reconnects and handshakes anew. The old listener closes in libzmq's I/O thread, so a bind
    /// that finds the address still in use is retried for up to `patience`.
    /// - Throws: `ZMQError` when an endpoint cannot be unbound, or bound again in time.
    public func rebind(_ endpoints: [String], patience: Duration = .seconds(2)) throws(ZMQError) {
        for endpoint in endpoints {
            try unbind(endpoint)
            let deadline = ContinuousClock.now + patience
            while true {
                do {
                    try bind(endpoint)
                    break
                } catch where error.code == .addressInUse && ContinuousClock.now < deadline {
                    usleep(10_000)
                }
            }
        }
    }

    /// Drops a connection made with ``connect(_:)`` (`zmq_disconnect`).
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        try check(zmq_disconnect(try open("disconnect"), endpoint), "disconnect", endpoint: endpoint)
        endpoints.removeAll { $0 == endpoint }
    }

    /// The endpoint most recently bound or connected, with wildcards resolved (`ZMQ_LAST_ENDPOINT`).
    public var lastEndpoint: String {
        get throws(ZMQError) { try option(.lastEndpoint) }
    }

    /// What the socket can do now without waiting (`ZMQ_EVENTS`).
    public var events: PollEvents {
        get throws(ZMQError) { PollEvents(rawValue: Int16(truncatingIfNeeded: try option(.events))) }
    }

    // MARK: Sending

    /// Sends one frame (`zmq_send`), copying the bytes.
    ///
    /// - Returns: `false` when the frame was not queued because the socket would block
    ///   (with ``SendOptions/dontWait``, or when the send timeout expired).
    @discardableResult
    public func send(_ frame: UnsafeRawBufferPointer, options: SendOptions = []) throws(ZMQError) -> Bool {
        let handle = try open("send")
        let result = retryingOnInterrupt { zmq_send(handle, frame.baseAddress, frame.count, options.rawValue) }
        if result >= 0 { wireBytesSent &+= wireSize(ofFrame: Int(result)) }
        return try wouldBlockIsFalse(result, "send")
    }

    /// Sends one frame of bytes (`[UInt8]`, `ArraySlice`, `String.UTF8View`, `Data`, …).
    ///
    /// - Returns: `false` when the frame was not queued because the socket would block.
    // Inlinable, like the multipart send below, so that callers get it specialised for their
    // frame type instead of paying for generic dispatch on every frame.
    @inlinable @discardableResult
    public func send<Bytes: Collection<UInt8>>(_ frame: Bytes, options: SendOptions = []) throws(ZMQError) -> Bool {
        // The closures cannot throw typed errors through the standard library, so they return Results.
        let sent: Result<Bool, ZMQError> = frame.withContiguousStorageIfAvailable { buffer in
            Result { () throws(ZMQError) in try send(UnsafeRawBufferPointer(buffer), options: options) }
        } ?? Array(frame).withUnsafeBytes { buffer in
            Result { () throws(ZMQError) in try send(buffer, options: options) }
        }
        return try sent.get()
    }

    /// Sends the frames of one message atomically: all arrive or none do.
    ///
    /// - Returns: `false` when the message was not queued because the socket would block
    ///   (checked on the first frame; once it is queued the rest cannot block).
    @inlinable @discardableResult
    public func send<Frame: Collection<UInt8>>(multipart frames: some Collection<Frame>, options: SendOptions = []) throws(ZMQError) -> Bool {
        var remaining = frames.count
        guard remaining > 0 else {
            throw ZMQError(code: .invalidArgument, operation: "send multipart with no frames")
        }
        for frame in frames {
            remaining -= 1
            let frameOptions = remaining > 0 ? options.union(.more) : options.subtracting(.more)
            if try !send(frame, options: frameOptions) { return false }
        }
        return true
    }

    /// Sends a received frame on without copying it (`zmq_msg_send`): libzmq takes the frame's
    /// content and leaves `message` empty, ready for the next receive. This is how a router
    /// forwards bodies of any size at the cost of a pointer.
    ///
    /// - Returns: `false` when the frame was not queued because the socket would block; the
    ///   message then keeps its content.
    @discardableResult
    public func send(_ message: Message, options: SendOptions = []) throws(ZMQError) -> Bool {
        let handle = try open("send")
        let result = retryingOnInterrupt { zmq_msg_send(message.pointer, handle, options.rawValue) }
        if result >= 0 { wireBytesSent &+= wireSize(ofFrame: Int(result)) }
        return try wouldBlockIsFalse(result, "send")
    }

    // MARK: Receiving

    /// Receives one frame into a reusable message (`zmq_msg_recv`); the message's previous
    /// content is released, and no buffer is allocated for small frames.
    ///
    /// - Returns: `false` when no frame was there (with ``ReceiveOptions/dontWait``, or when
    ///   the receive timeout expired).
    public func receive(into message: Message, options: ReceiveOptions = []) throws(ZMQError) -> Bool {
        let handle = try open("receive")
        let result = retryingOnInterrupt { zmq_msg_recv(message.pointer, handle, options.rawValue) }
        if result >= 0 { wireBytesReceived &+= wireSize(ofFrame: Int(result)) }
        return try wouldBlockIsFalse(result, "receive")
    }

    /// Receives one frame as a new byte array, of whatever size it has.
    ///
    /// - Returns: `nil` when no frame was there.
    public func receive(options: ReceiveOptions = []) throws(ZMQError) -> [UInt8]? {
        let message = Message()
        return try receive(into: message, options: options) ? message.bytes : nil
    }

    /// Receives every frame of one message.
    ///
    /// - Returns: `nil` when no message was there. The frames after the first are never
    ///   waited for: libzmq delivers a message's frames together.
    public func receiveMultipart(options: ReceiveOptions = []) throws(ZMQError) -> [[UInt8]]? {
        let message = Message()
        guard try receive(into: message, options: options) else { return nil }
        var frames = [message.bytes]
        while message.hasMore {
            _ = try receive(into: message)
            frames.append(message.bytes)
        }
        return frames
    }

    /// Receives every frame of one message into `frames`, reusing the messages it holds and
    /// appending new ones only when a message has more frames than any before (`zmq_msg_recv`),
    /// so that a receive loop allocates nothing per message. Messages past the returned count
    /// are left as they were.
    ///
    /// - Returns: how many frames the message has, at the start of `frames`; 0 when no message
    ///   was there. The frames after the first are never waited for.
    public func receiveMultipart(into frames: inout [Message], options: ReceiveOptions = []) throws(ZMQError) -> Int {
        try receiveFrames(into: &frames, options: options) { _ in }
    }

    /// ``receiveMultipart(into:options:)``, also replacing the content of `bytes` with each
    /// frame's bytes (`zmq_msg_data`), taken while the frame is at hand. They stay valid only
    /// until that message is received into again, sent (which empties it) or released: for a
    /// loop that reads each frame in place several times and would otherwise pay two libzmq
    /// calls and a retain per read.
    public func receiveMultipart(
        into frames: inout [Message], bytes: inout [UnsafeRawBufferPointer], options: ReceiveOptions = []
    ) throws(ZMQError) -> Int {
        bytes.removeAll(keepingCapacity: true)
        return try receiveFrames(into: &frames, options: options) { bytes.append($0) }
    }

    /// The loop of both `receiveMultipart(into:)`: a broker and its workers run it for every
    /// message, so the handle is checked once and each frame goes straight to `zmq_msg_recv`.
    private func receiveFrames(
        into frames: inout [Message], options: ReceiveOptions, _ received: (UnsafeRawBufferPointer) -> Void
    ) throws(ZMQError) -> Int {
        let handle = try open("receive")
        var flags = options.rawValue
        var count = 0
        while true {
            if count == frames.count { frames.append(Message()) }
            // The array keeps the message alive while libzmq writes to it.
            let pointer = frames[count].pointer
            let result = retryingOnInterrupt { zmq_msg_recv(pointer, handle, flags) }
            if result < 0, count == 0 {
                // No message (EAGAIN) is 0 frames; any other failure throws.
                _ = try wouldBlockIsFalse(result, "receive")
                return 0
            }
            let size = Int(try check(result, "receive", endpoint: endpoints.first))
            wireBytesReceived &+= wireSize(ofFrame: size)
            received(UnsafeRawBufferPointer(start: zmq_msg_data(pointer), count: size))
            count += 1
            if zmq_msg_more(pointer) == 0 { return count }
            // The rest of a message has arrived with its first frame: never waited for.
            flags = 0
        }
    }

    private func wouldBlockIsFalse(_ result: Int32, _ operation: String) throws(ZMQError) -> Bool {
        do throws(ZMQError) {
            try check(result, operation, endpoint: endpoints.isEmpty ? nil : endpoints.joined(separator: ", "))
            return true
        } catch where error.code == .wouldBlock {
            return false
        }
    }
}
