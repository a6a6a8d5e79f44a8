import CZMQ
import Glibc

/// A libzmq context: the I/O threads and the registry that sockets are created from.
///
/// A context may be shared by any number of threads. It lives at least as long as its
/// sockets, since each socket keeps a reference to it; it is terminated when the last
/// reference goes.
public final class Context: @unchecked Sendable {
    // libzmq documents contexts as thread-safe, which is why the class is Sendable.
    let handle: UnsafeMutableRawPointer

    /// Creates a context with the given number of I/O threads (`zmq_ctx_new`, `zmq_ctx_set`),
    /// after seeding the C library's `rand()` unpredictably (see ``seedRoutingIDCounters()``).
    public init(ioThreads: Int32 = 1) throws(ZMQError) {
        Self.seedRoutingIDCounters()
        let handle = try check(zmq_ctx_new(), "zmq_ctx_new")
        self.handle = handle
        try check(zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads), "zmq_ctx_set ZMQ_IO_THREADS")
    }

    /// Creates a socket of the given type in this context (`zmq_socket`).
    public func socket(_ type: SocketType) throws(ZMQError) -> Socket {
        try Socket(context: self, type: type)
    }

    /// Seeds `rand()` from the system's random source, so that every ROUTER created afterwards
    /// starts its automatic routing ids (`0x00` and a 4-byte counter) at a value no peer can
    /// predict.
    ///
    /// libzmq 4.3.4 starts that counter at `rand()` when a ROUTER is made and never calls
    /// `srand()`, so without this every process starts at the same value; and it asserts
    /// (`socket_base.cpp` `add_out_pipe`) when the next automatic id equals one a peer chose
    /// for itself. libzmq offers no way to refuse a peer's chosen id before it is stored (its
    /// ZAP request carries the server's own routing id, not the peer's), so an unpredictable
    /// start, with no automatic id ever shown to a peer, is what keeps a peer from aiming at
    /// it (protocol/majordomo.md, "Routing ids").
    public static func seedRoutingIDCounters() {
        // The system generator reads the kernel's random source (getrandom).
        srand(UInt32.random(in: .min ... .max))
    }

    /// Makes every blocking call on this context's sockets, now and later, fail with
    /// ``ZMQError/Code/terminated`` (`zmq_ctx_shutdown`). Sockets must still be closed.
    public func shutdown() {
        // Fails only for a handle that is not a context (EFAULT), which `handle` never is.
        zmq_ctx_shutdown(handle)
    }

    deinit {
        // Every socket holds a reference, so none is open here and this cannot wait on one.
        _ = retryingOnInterrupt { zmq_ctx_term(handle) }
    }
}
