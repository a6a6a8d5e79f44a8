#if canImport(Glibc)
import Glibc
#endif

/// Waits until one socket may have a message to receive, or a plain file descriptor is
/// readable, with a single system `poll` on the socket's `ZMQ_FD`.
///
/// This is the cheap wait of a loop that serves one socket: ``Poller`` (`zmq_poll`) polls
/// twice and reads `ZMQ_EVENTS` before and after every wait, several system calls per wake-up.
/// `ZMQ_FD` only signals what the socket has not processed yet, and every send, receive and
/// `ZMQ_EVENTS` read processes it. So wait without checking first only right after a receive
/// found nothing; after any other use of the socket, let ``wait(timeout:checkingFirst:)`` read
/// ``Socket/events`` before it sleeps.
///
/// Like the socket it watches, a waiter belongs to one thread at a time.
public struct SocketWaiter {
    private let socket: Socket
    private var descriptors: [pollfd]

    /// Creates a waiter for `socket` and, optionally, a descriptor such as a wake-up pipe.
    public init(_ socket: Socket, fileDescriptor: Int32? = nil) throws(ZMQError) {
        var descriptors = [pollfd(fd: try socket.option(.fileDescriptor), events: Int16(POLLIN), revents: 0)]
        if let fileDescriptor {
            descriptors.append(pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0))
        }
        self.socket = socket
        self.descriptors = descriptors
    }

    /// Returns once the socket may have a message, the descriptor is readable, a signal
    /// arrives, or `timeout` passes; the caller finds out which by receiving without waiting.
    /// - Parameter checkingFirst: read `ZMQ_EVENTS` before sleeping; needed unless the last use
    ///   of the socket was a receive that found nothing.
    public mutating func wait(timeout: Duration, checkingFirst: Bool = true) throws(ZMQError) {
        if checkingFirst, try socket.events.contains(.readable) { return }
        let milliseconds = Int32(clamping: Poller.milliseconds(rounding: timeout))
        let count = nfds_t(descriptors.count)
        let result = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, count, milliseconds) }
        if result < 0 && errno != EINTR {
            throw ZMQError(code: .init(rawValue: errno), operation: "poll", endpoint: socket.endpoints.first)
        }
    }
}
