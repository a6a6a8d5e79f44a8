import CZMQ
import Synchronization

/// Something that happened to a socket's connections, as reported by `zmq_socket_monitor`.
public struct MonitorEvent: Sendable, Equatable {
    /// Kinds of connection event; combine them to choose what a monitor reports.
    public struct Kind: OptionSet, Sendable, Hashable {
        /// The raw `ZMQ_EVENT_*` bits.
        public let rawValue: UInt16
        /// Wraps raw `ZMQ_EVENT_*` bits.
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// A connection to a peer was made.
        public static let connected = Kind(rawValue: UInt16(ZMQ_EVENT_CONNECTED))
        /// A connect attempt is in progress and will be retried.
        public static let connectDelayed = Kind(rawValue: UInt16(ZMQ_EVENT_CONNECT_DELAYED))
        /// A reconnect is scheduled; the value is the interval in milliseconds.
        public static let connectRetried = Kind(rawValue: UInt16(ZMQ_EVENT_CONNECT_RETRIED))
        /// The socket is listening on an endpoint.
        public static let listening = Kind(rawValue: UInt16(ZMQ_EVENT_LISTENING))
        /// Binding failed.
        public static let bindFailed = Kind(rawValue: UInt16(ZMQ_EVENT_BIND_FAILED))
        /// A peer's connection was accepted.
        public static let accepted = Kind(rawValue: UInt16(ZMQ_EVENT_ACCEPTED))
        /// Accepting a connection failed.
        public static let acceptFailed = Kind(rawValue: UInt16(ZMQ_EVENT_ACCEPT_FAILED))
        /// A connection's underlying descriptor was closed.
        public static let closed = Kind(rawValue: UInt16(ZMQ_EVENT_CLOSED))
        /// A peer disconnected or the connection broke.
        public static let disconnected = Kind(rawValue: UInt16(ZMQ_EVENT_DISCONNECTED))
        /// The ZMTP handshake (including any CURVE authentication) succeeded.
        public static let handshakeSucceeded = Kind(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_SUCCEEDED))
        /// The handshake failed for a reason libzmq does not detail (e.g. a wrong CURVE key).
        public static let handshakeFailedNoDetail = Kind(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL))
        /// The peer broke the ZMTP protocol during the handshake.
        public static let handshakeFailedProtocol = Kind(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL))
        /// Authentication of the peer failed.
        public static let handshakeFailedAuthentication = Kind(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
        /// The monitor itself was stopped.
        public static let monitorStopped = Kind(rawValue: UInt16(ZMQ_EVENT_MONITOR_STOPPED))
        /// Every kind.
        public static let all = Kind(rawValue: UInt16(truncatingIfNeeded: ZMQ_EVENT_ALL))
        /// Every way a handshake can fail.
        public static let handshakeFailed: Kind = [.handshakeFailedNoDetail, .handshakeFailedProtocol, .handshakeFailedAuthentication]
    }

    /// What happened.
    public let kind: Kind
    /// The event's value: a descriptor, an interval, or an error number, depending on the kind.
    public let value: UInt32
    /// The endpoint the event concerns.
    public let endpoint: String
}

/// Reports the connection events of one socket (`zmq_socket_monitor`).
///
/// The monitor reads from an in-process PAIR socket, so it belongs to one thread at a time.
public final class SocketMonitor {
    /// The monitored socket, kept open while it is monitored: see `deinit`.
    private let monitored: Socket
    private let events: Socket
    private let message = Message()
    /// Events queued for the reader before libzmq drops more (about 100 bytes each).
    static let eventQueueLimit: Int32 = 100_000
    /// Monitors made by the process so far: each one's inproc endpoint name.
    private static let monitorsMade = Atomic<UInt64>(0)

    /// Starts monitoring `socket` for the given kinds of event.
    public init(_ socket: Socket, kinds: MonitorEvent.Kind = .all) throws(ZMQError) {
        let handle = try socket.open("zmq_socket_monitor")
        monitored = socket
        // A number of the process's own, not the socket's address: libzmq closes a monitor's inproc
        // endpoint asynchronously after its socket, so a new socket at a reused address could find
        // the name still taken (a broker restarted in the same process failed to start that way).
        let endpoint = "inproc://lyceum-monitor-\(Self.monitorsMade.add(1, ordering: .relaxed).newValue)"
        try check(zmq_socket_monitor(handle, endpoint, Int32(kinds.rawValue)), "zmq_socket_monitor", endpoint: endpoint)
        events = try socket.context.socket(.pair)
        // libzmq drops events its monitor pipe has no room for; a burst of connections must
        // not lose the ones a connection table is built from.
        try events.set(.receiveHighWaterMark, to: Self.eventQueueLimit)
        try events.connect(endpoint)
    }

    /// Stops the monitoring before the reading socket closes. libzmq's I/O thread sends events
    /// to the monitor with a blocking send and stops only when the monitored socket is
    /// destroyed, after its linger: an event of a lingering connection with no reader left
    /// would block that thread, and with it every socket of the context (`zmq_socket_monitor`
    /// with no endpoint, which cannot fail on an open socket).
    deinit {
        if let handle = monitored.handle { zmq_socket_monitor(handle, nil, 0) }
    }

    /// The next event, or `nil` when none comes within `timeout` (`nil`: wait forever).
    public func next(timeout: Duration?) throws(ZMQError) -> MonitorEvent? {
        var poller = Poller()
        try poller.add(events)
        guard try poller.poll(timeout: timeout) > 0, try events.receive(into: message, options: .dontWait) else {
            return nil
        }
        // Frame 1: a 16-bit event number then a 32-bit value, native byte order; frame 2: the endpoint.
        let (kind, value) = message.withUnsafeBytes { bytes in
            (bytes.loadUnaligned(as: UInt16.self), bytes.loadUnaligned(fromByteOffset: 2, as: UInt32.self))
        }
        _ = try events.receive(into: message)
        let endpoint = message.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        return MonitorEvent(kind: MonitorEvent.Kind(rawValue: kind), value: value, endpoint: endpoint)
    }

    /// Waits for the first event of any of `kinds`, skipping others, until `timeout` passes.
    public func wait(for kinds: MonitorEvent.Kind, timeout: Duration) throws(ZMQError) -> MonitorEvent? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while case let remaining = ContinuousClock.now.duration(to: deadline), remaining > .zero {
            guard let event = try next(timeout: remaining) else { return nil }
            if !event.kind.isDisjoint(with: kinds) { return event }
        }
        return nil
    }
}
