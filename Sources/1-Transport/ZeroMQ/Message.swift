import CZMQ

/// One frame, owned by libzmq (`zmq_msg_t`), reusable across receives so that a receive
/// loop allocates nothing per message for small frames.
///
/// A message belongs to one thread at a time, like a ``Socket``.
public final class Message {
    @usableFromInline let pointer: UnsafeMutablePointer<zmq_msg_t>

    /// Creates an empty message (`zmq_msg_init`).
    public init() {
        pointer = .allocate(capacity: 1)
        zmq_msg_init(pointer)
    }

    /// Creates a message holding the same frame as `source`, which keeps its own
    /// (`zmq_msg_copy`): a frame of more than 33 bytes is shared, reference-counted, not copied;
    /// a smaller one is copied. Sending either message empties that one only, so a copy keeps a
    /// frame that is sent on, for as long as it lives.
    public init(copying source: Message) {
        pointer = .allocate(capacity: 1)
        zmq_msg_init(pointer)
        // Fails only for a message that was never initialised (EFAULT), which both are.
        zmq_msg_copy(pointer, source.pointer)
    }

    deinit {
        zmq_msg_close(pointer)
        pointer.deallocate()
    }

    /// The frame's size in bytes (`zmq_msg_size`).
    @inlinable public var count: Int { zmq_msg_size(pointer) }

    /// Whether more frames of the same message follow this one (`zmq_msg_more`).
    public var hasMore: Bool { zmq_msg_more(pointer) != 0 }

    /// Calls `body` with the frame's bytes, valid only during the call (`zmq_msg_data`).
    // Inlinable, so that callers get it specialised: a router reads several frames in place
    // per message, and generic dispatch would cost more than the read.
    @inlinable
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: zmq_msg_data(pointer), count: count))
    }

    /// The descriptor of the TCP (or IPC) connection the frame arrived on, as libzmq records it
    /// (`zmq_msg_get(ZMQ_SRCFD)`); `nil` for a frame that came from no connection, such as one
    /// sent in-process. A ROUTER's routing-id frame carries its connection's descriptor too.
    public var sourceDescriptor: Int32? {
        let descriptor = zmq_msg_get(pointer, ZMQ_SRCFD)
        return descriptor >= 0 ? descriptor : nil
    }

    /// A property of the connection the frame arrived on (`zmq_msg_gets`): `"User-Id"` (what
    /// the ZAP handler named the authenticated peer), `"Peer-Address"`, `"Socket-Type"`, or a
    /// property of the ZAP reply's metadata; `nil` when the connection has no such property.
    public func property(_ name: String) -> String? {
        guard let value = zmq_msg_gets(pointer, name) else { return nil }
        return String(cString: value)
    }

    /// A copy of the frame's bytes.
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }
}
