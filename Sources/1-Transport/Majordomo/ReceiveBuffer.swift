import ZeroMQ

/// The frames of the last message a broker or worker received, kept in reusable `Message`s and
/// read in place, so that its receive loop allocates only the bytes it keeps and can forward a
/// body frame without copying it (``messages(from:)``, sent with `Socket.send(_:options:)`).
///
/// Memory stays bounded: at most ``retainedFrames`` messages are kept between receives, and a
/// frame larger than ``retainedFrameSize`` is released at the next receive, whether a message
/// comes or not.
struct ReceiveBuffer: FrameList {
    /// Messages kept for reuse; an MDP command rarely has more frames.
    static let retainedFrames = 16
    /// Largest frame whose storage is kept for the next receive.
    static let retainedFrameSize = 4096

    private var messages: [Message] = []
    /// Each frame's bytes, taken once per receive (`Socket.receiveMultipart(into:bytes:options:)`):
    /// the broker and the pool read frames in place many times per message. A frame taken or
    /// sent reads as empty from then on, never as bytes libzmq may have freed.
    private var frames: [UnsafeRawBufferPointer] = []
    /// Empty messages for ``takeMessages(from:)`` to put in place of those it takes.
    private var spares: [Message] = []
    /// The number of frames of the message received last; 0 once a receive found nothing.
    private(set) var endIndex = 0

    /// Receives one message without waiting, releasing the previous one's large frames first.
    /// - Returns: whether a message was there; its frames are `0..<endIndex`.
    mutating func receive(from socket: Socket) throws(ZMQError) -> Bool {
        for index in 0..<endIndex where frames[index].count > Self.retainedFrameSize { messages[index] = Message() }
        if messages.count > Self.retainedFrames { messages.removeLast(messages.count - Self.retainedFrames) }
        // Cleared first, so that after a failing receive the buffer shows no frames, not stale ones.
        endIndex = 0
        endIndex = try socket.receiveMultipart(into: &messages, bytes: &frames, options: .dontWait)
        return endIndex > 0
    }

    /// The descriptor of the connection the last message came from, when it came over one.
    var sourceDescriptor: Int32? { endIndex > 0 ? messages[0].sourceDescriptor : nil }

    /// A property of the connection frame `index` arrived on, such as `"User-Id"`; a frame the
    /// socket made itself (a ROUTER's routing id) has none.
    func property(_ name: String, ofFrame index: Int) -> String? {
        messages[index].property(name)
    }

    func withFrameBytes<Result>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        body(frames[index])
    }

    /// The frames from `start` to the end themselves, to send on without copying; sending a
    /// frame empties it, so they read as empty from now on.
    mutating func messages(from start: Int) -> ArraySlice<Message> {
        forgetBytes(from: start)
        return messages[start..<endIndex]
    }

    /// Takes the frames from `start` to the end, to keep beyond the next receive without
    /// copying them; recycled messages (``recycle(_:)``), else fresh ones, take their places.
    mutating func takeMessages(from start: Int) -> [Message] {
        forgetBytes(from: start)
        return (start..<endIndex).map { index in
            let taken = messages[index]
            messages[index] = spares.popLast() ?? Message()
            return taken
        }
    }

    /// Makes the frames from `start` on read as empty, before they leave the buffer's hands.
    private mutating func forgetBytes(from start: Int) {
        for index in start..<endIndex { frames[index] = UnsafeRawBufferPointer(start: nil, count: 0) }
    }

    /// Keeps taken messages that are empty again (sent: libzmq took their content) for the next
    /// ``takeMessages(from:)``, so that a broker whose requests wait in a queue, as they do
    /// whenever clients have more in flight than there are workers, allocates no message per
    /// request; at most ``retainedFrames`` are kept.
    mutating func recycle(_ sent: [Message]) {
        for message in sent where spares.count < Self.retainedFrames && message.count == 0 {
            spares.append(message)
        }
    }
}
