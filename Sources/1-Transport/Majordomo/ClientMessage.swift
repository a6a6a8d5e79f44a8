import ZeroMQ

/// One MDP/Client command: a REQUEST from a client or a REPLY to it, which have the same frames.
///
/// Frames are as a DEALER sends and receives them: starting with the empty frame (which a
/// REQ socket adds and removes by itself), without the routing id a ROUTER adds.
public struct ClientMessage: Equatable, Sendable {
    /// The service name, compared as bytes.
    public var service: [UInt8]
    /// The opaque body, at least one frame on the wire.
    public var body: [[UInt8]]

    /// Creates a message; an empty body is sent as one empty frame.
    public init(service: [UInt8], body: [[UInt8]]) {
        self.service = service
        self.body = body
    }

    /// The frames on the wire: empty, `MDPC01`, service, body.
    public var frames: [[UInt8]] {
        // Built in one array of the final size: the broker encodes one per reply.
        var frames: [[UInt8]] = []
        frames.reserveCapacity(3 + max(body.count, 1))
        frames.append([])
        frames.append(MDP.clientHeader)
        frames.append(service)
        if body.isEmpty { frames.append([]) } else { frames.append(contentsOf: body) }
        return frames
    }

    /// Sends a request or reply with the frames ``frames`` would have, after whatever routing
    /// frames were sent before it with `.more`, without building arrays and without waiting.
    /// Body frames that are `Message`s leave without a copy.
    /// - Returns: `false` when the socket would block on the first frame, so nothing was sent.
    @discardableResult
    static func send(service: [UInt8], body: some Collection<some OutgoingFrame>, on socket: Socket) throws(ZMQError) -> Bool {
        let more: SendOptions = [.dontWait, .more]
        guard try socket.sendEmptyFrame(options: more) else { return false }
        try socket.send(MDP.clientHeader, options: more)
        try socket.send(service, options: more)
        try socket.sendBody(body)
        return true
    }

    /// Where the service name is, counted from the empty frame.
    static let serviceIndex = 2
    /// Where the body starts, counted from the empty frame.
    static let bodyIndex = 3

    /// Decodes frames as a DEALER receives them (a ROUTER drops its routing id first).
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    public init(frames: ArraySlice<[UInt8]>) throws(ProtocolViolation) {
        let start = frames.startIndex
        try Self.validate(frames, from: start)
        service = frames[start + Self.serviceIndex]
        body = Array(frames[(start + Self.bodyIndex)...])
    }

    /// Checks the frames from `start` (the empty frame) on in place; the service name is then
    /// at ``serviceIndex`` from `start` and the body from ``bodyIndex`` on.
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    static func validate(_ frames: some FrameList, from start: Int) throws(ProtocolViolation) {
        let count = frames.endIndex - start
        guard count >= 4 else { throw ProtocolViolation("expected at least 4 frames, got \(count)") }
        guard frames.frameIsEmpty(start) else { throw ProtocolViolation("frame 0 is not empty") }
        guard frames.frame(start + 1, equals: MDP.clientHeader) else { throw ProtocolViolation("frame 1 is not MDPC01") }
        guard !frames.frameIsEmpty(start + serviceIndex) else { throw ProtocolViolation("empty service name") }
    }
}
