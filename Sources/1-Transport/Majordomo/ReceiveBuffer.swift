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
    /// The number of frames of the message received last; 0 once a receive found nothing.
    private(set) var endIndex = 0

    /// Receives one message without waiting, releasing the previous one's large frames first.
    /// - Returns: whether a message was there; its frames are `0..<endIndex`.
    mutating func receive(from socket: Socket) throws(ZMQError) -> Bool {
        for index in 0..<endIndex where messages[index].count > Self.retainedFrameSize { messages[index] = Message() }
        if messages.count > Self.retainedFrames { messages.removeLast(messages.count - Self.retainedFrames) }
        // Cleared first, so that after a failing receive the buffer shows no frames, not stale ones.
        endIndex = 0
        endIndex = try socket.receiveMultipart(into: &messages, options: .dontWait)
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
        messages[index].withUnsafeBytes(body)
    }

    /// The frames from `start` to the end themselves, to send on without copying; sending a
    /// frame empties it.
    func messages(from start: Int) -> ArraySlice<Message> {
        messages[start..<endIndex]
    }

    /// Takes the frames from `start` to the end, to keep beyond the next receive without
    /// copying them; fresh messages take their places.
    mutating func takeMessages(from start: Int) -> [Message] {
        (start..<endIndex).map { index in
            let taken = messages[index]
            messages[index] = Message()
            return taken
        }
    }
}
