import CZMQ

/// How a send behaves.
public struct SendOptions: OptionSet, Sendable {
    /// The raw `zmq_send` flags.
    public let rawValue: Int32
    /// Wraps raw `zmq_send` flags.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Return at once instead of waiting when the message cannot be queued (`ZMQ_DONTWAIT`).
    public static let dontWait = SendOptions(rawValue: ZMQ_DONTWAIT)
    /// More frames of the same message follow (`ZMQ_SNDMORE`).
    public static let more = SendOptions(rawValue: ZMQ_SNDMORE)
}

/// How a receive behaves.
public struct ReceiveOptions: OptionSet, Sendable {
    /// The raw `zmq_recv` flags.
    public let rawValue: Int32
    /// Wraps raw `zmq_recv` flags.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Return at once instead of waiting when no message is there (`ZMQ_DONTWAIT`).
    public static let dontWait = ReceiveOptions(rawValue: ZMQ_DONTWAIT)
}

/// Readiness of a socket or file descriptor, as polled or as read from `ZMQ_EVENTS`.
public struct PollEvents: OptionSet, Sendable, Hashable {
    /// The raw `ZMQ_POLL*` bits.
    public let rawValue: Int16
    /// Wraps raw `ZMQ_POLL*` bits.
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// At least one message (or byte, for a descriptor) can be received without waiting.
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// At least one message can be sent without waiting.
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition on a plain file descriptor.
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
}
