import ZeroMQ

/// Messages that a broker or worker receives into, one message after another, so that its
/// receive loop allocates only the bytes it keeps.
///
/// Memory stays bounded: at most ``retainedFrames`` messages are kept between receives, and a
/// frame larger than ``retainedFrameSize`` is released as soon as it is copied out.
struct ReceiveBuffer {
    /// Messages kept for reuse; an MDP command rarely has more frames.
    static let retainedFrames = 16
    /// Largest frame whose storage is kept for the next receive.
    static let retainedFrameSize = 4096

    private var messages: [Message] = []

    /// Receives one message without waiting.
    /// - Returns: its frames as bytes, or `nil` when no message was there.
    mutating func receive(from socket: Socket) throws(ZMQError) -> [[UInt8]]? {
        let count = try socket.receiveMultipart(into: &messages, options: .dontWait)
        guard count > 0 else { return nil }
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        for index in 0..<count {
            frames.append(messages[index].bytes)
            if messages[index].count > Self.retainedFrameSize { messages[index] = Message() }
        }
        if messages.count > Self.retainedFrames { messages.removeLast(messages.count - Self.retainedFrames) }
        return frames
    }
}
