import CZMQ
#if canImport(Glibc)
import Glibc
#endif

/// A failed libzmq call: the error number, libzmq's text for it, and the operation and
/// endpoint involved, e.g. `bind tcp://127.0.0.1:5555: Address already in use`.
public struct ZMQError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An error number from libzmq or the operating system, with names for those callers act on.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The `errno` value libzmq reported.
        public let rawValue: Int32

        /// Wraps an `errno` value.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// `EAGAIN`: a non-blocking or timed operation could not complete now.
        public static let wouldBlock = Code(rawValue: EAGAIN)
        /// `ETERM`: the socket's context was shut down or terminated.
        public static let terminated = Code(rawValue: czmq_eterm())
        /// `EADDRINUSE`: another socket already listens on the endpoint.
        public static let addressInUse = Code(rawValue: EADDRINUSE)
        /// `EADDRNOTAVAIL`: the endpoint names an address this host does not have.
        public static let addressNotAvailable = Code(rawValue: EADDRNOTAVAIL)
        /// `EINVAL`: an argument (endpoint syntax, option value, key length) is invalid.
        public static let invalidArgument = Code(rawValue: EINVAL)
        /// `EPROTONOSUPPORT`: the endpoint's transport is not supported.
        public static let transportNotSupported = Code(rawValue: EPROTONOSUPPORT)
        /// `ENOTSUP`: the operation is not supported by this socket type.
        public static let notSupported = Code(rawValue: ENOTSUP)
        /// `EFSM`: the operation is not allowed in the socket's current state (e.g. REQ sending twice).
        public static let wrongState = Code(rawValue: czmq_efsm())
        /// `EHOSTUNREACH`: a ROUTER with `routerMandatory` has no peer with that routing id.
        public static let hostUnreachable = Code(rawValue: EHOSTUNREACH)
        /// `ENOENT`: an endpoint to unbind or disconnect was not bound or connected.
        public static let noSuchEndpoint = Code(rawValue: ENOENT)
        /// `EMFILE`: the process or context ran out of sockets or file descriptors.
        public static let tooManyOpenFiles = Code(rawValue: EMFILE)
        /// `EINTR`: a signal interrupted the call.
        public static let interrupted = Code(rawValue: EINTR)

        /// libzmq's text for the error number (`zmq_strerror`).
        public var description: String { String(cString: zmq_strerror(rawValue)) }
    }

    /// What went wrong.
    public let code: Code
    /// The operation that failed, such as `bind` or `setsockopt ZMQ_LINGER`.
    public let operation: String
    /// The endpoint involved, when there was one.
    public let endpoint: String?

    /// Creates an error; libzmq calls are checked by the module's funnel, which fills these in.
    public init(code: Code, operation: String, endpoint: String? = nil) {
        self.code = code
        self.operation = operation
        self.endpoint = endpoint
    }

    /// `operation [endpoint]: strerror text`.
    public var description: String {
        if let endpoint { return "\(operation) \(endpoint): \(code)" }
        return "\(operation): \(code)"
    }
}

/// The one place a failing libzmq call becomes a ``ZMQError``: a negative result is read
/// together with `zmq_errno()` before anything else can overwrite it.
@inline(__always)
@discardableResult
func check(
    _ result: Int32,
    _ operation: @autoclosure () -> String,
    endpoint: @autoclosure () -> String? = nil
) throws(ZMQError) -> Int32 {
    if result >= 0 { return result }
    throw ZMQError(code: .init(rawValue: zmq_errno()), operation: operation(), endpoint: endpoint())
}

/// The funnel for libzmq calls that report failure with a null pointer (`zmq_ctx_new`,
/// `zmq_socket`): the pointer, or the error read from `zmq_errno()` at once.
@inline(__always)
func check(
    _ result: UnsafeMutableRawPointer?,
    _ operation: @autoclosure () -> String
) throws(ZMQError) -> UnsafeMutableRawPointer {
    if let result { return result }
    throw ZMQError(code: .init(rawValue: zmq_errno()), operation: operation())
}

/// Repeats a blocking libzmq call while a signal interrupts it, so that signal handling
/// elsewhere in the process never surfaces as a spurious failure here.
@inline(__always)
func retryingOnInterrupt(_ call: () -> Int32) -> Int32 {
    while true {
        let result = call()
        if result >= 0 || zmq_errno() != EINTR { return result }
    }
}
