#if canImport(Glibc)
import Glibc
import LyceumSupport
#endif

/// Waits until one of some sockets may have a message to receive, or one of some plain file
/// descriptors is readable, with a single system `poll` on the sockets' `ZMQ_FD`s.
///
/// This is the cheap wait of a loop that serves its own sockets: ``Poller`` (`zmq_poll`) polls
/// twice and reads `ZMQ_EVENTS` of every socket before and after every wait, several system
/// calls per socket and wake-up. `ZMQ_FD` only signals what a socket has not processed yet, and
/// every send, receive and `ZMQ_EVENTS` read processes it. So sleep only once every socket's
/// last use was a receive that found nothing; after any other use of a socket, receive from it
/// (or read ``Socket/events``) before waiting, or let ``wait(timeout:checkingFirst:)`` do so.
///
/// Like the sockets it watches, a waiter belongs to one thread at a time.
public struct SocketWaiter {
    private let sockets: [Socket]
    private var descriptors: [pollfd]

    /// Creates a waiter for `socket` and, optionally, a descriptor such as a wake-up pipe.
    public init(_ socket: Socket, fileDescriptor: Int32? = nil) throws(ZMQError) {
        try self.init(sockets: [socket], fileDescriptors: fileDescriptor.map { [$0] } ?? [])
    }

    /// Creates a waiter for `sockets` and the plain descriptors `fileDescriptors`.
    public init(sockets: [Socket], fileDescriptors: [Int32]) throws(ZMQError) {
        var descriptors: [pollfd] = []
        for socket in sockets {
            descriptors.append(pollfd(fd: try socket.option(.fileDescriptor), events: Int16(POLLIN), revents: 0))
        }
        for descriptor in fileDescriptors {
            descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        }
        self.sockets = sockets
        self.descriptors = descriptors
    }

    /// Returns once the socket may have a message, the descriptor is readable, a signal
    /// arrives, or `timeout` passes; the caller finds out which by receiving without waiting.
    /// - Parameter checkingFirst: read `ZMQ_EVENTS` before sleeping; needed unless the last use
    ///   of the socket was a receive that found nothing.
    public mutating func wait(timeout: Duration, checkingFirst: Bool = true) throws(ZMQError) {
        if checkingFirst, try sockets[0].events.contains(.readable) { return }
        try waitForDescriptors(timeout: timeout)
    }

    /// Returns once a socket's `ZMQ_FD` or a descriptor is readable, a signal arrives, or
    /// `timeout` passes; ``socketMayBeReady(_:)`` and ``descriptorIsReadable(_:)`` then tell which.
    /// Sleeps even when a socket holds messages its `ZMQ_FD` does not announce: see the type's
    /// documentation for when that is safe.
    public mutating func waitForDescriptors(timeout: Duration) throws(ZMQError) {
        let milliseconds = Int32(clamping: max(0, timeout.millisecondsRoundedUp))
        let count = nfds_t(descriptors.count)
        let result = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, count, milliseconds) }
        if result < 0 {
            guard errno == EINTR else {
                throw ZMQError(code: .init(rawValue: errno), operation: "poll", endpoint: sockets.first?.endpoints.first)
            }
            for index in descriptors.indices { descriptors[index].revents = 0 }
        }
    }

    /// Whether the last wait saw the `ZMQ_FD` of socket number `index` (in the order given) readable:
    /// the socket has commands to process, which a receive or an `events` read does.
    public func socketMayBeReady(_ index: Int) -> Bool {
        descriptors[index].revents != 0
    }

    /// Whether the last wait saw plain descriptor number `index` (in the order given) readable.
    public func descriptorIsReadable(_ index: Int) -> Bool {
        descriptors[sockets.count + index].revents != 0
    }
}
