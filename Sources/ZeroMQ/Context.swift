import CZMQ

/// A libzmq context: the I/O threads and the registry that sockets are created from.
///
/// A context may be shared by any number of threads. It lives at least as long as its
/// sockets, since each socket keeps a reference to it; it is terminated when the last
/// reference goes.
public final class Context: @unchecked Sendable {
    // libzmq documents contexts as thread-safe, which is why the class is Sendable.
    let handle: UnsafeMutableRawPointer

    /// Creates a context with the given number of I/O threads (`zmq_ctx_new`, `zmq_ctx_set`).
    public init(ioThreads: Int32 = 1) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else {
            throw ZMQError(code: .init(rawValue: zmq_errno()), operation: "zmq_ctx_new")
        }
        self.handle = handle
        try check(zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads), "zmq_ctx_set ZMQ_IO_THREADS")
    }

    /// Creates a socket of the given type in this context (`zmq_socket`).
    public func socket(_ type: SocketType) throws(ZMQError) -> Socket {
        try Socket(context: self, type: type)
    }

    /// Makes every blocking call on this context's sockets, now and later, fail with
    /// ``ZMQError/Code/terminated`` (`zmq_ctx_shutdown`). Sockets must still be closed.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    deinit {
        // Every socket holds a reference, so none is open here and this cannot wait on one.
        _ = retryingOnInterrupt { zmq_ctx_term(handle) }
    }
}
