import ZeroMQ

/// One MDP/Client command: a REQUEST from a client or a REPLY to it, which have the same frames
/// in 7/MDP; in 18/MDP (``MDPDialect``) a request and its replies (PARTIALs, a FINAL) differ by
/// their command byte, and majortomo's replies name no service.
///
/// Frames are as a DEALER sends and receives them: starting with the empty frame (which a
/// REQ socket adds and removes by itself; RFC 18's dialect has none), without the routing id a
/// ROUTER adds.
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

    /// The frames of this message as a request in `dialect`: 7/MDP's ``frames``; in 18/MDP the
    /// header, the REQUEST byte, the service, the body (after an empty frame in majortomo's).
    public func requestFrames(in dialect: MDPDialect) -> [[UInt8]] {
        guard let command = dialect.requestByte else { return frames }
        return (dialect.hasEmptyFrame ? [[]] : []) + [dialect.clientHeader, [command], service] + (body.isEmpty ? [[]] : body)
    }

    /// The frames of this message as a reply in `dialect`, a FINAL or (in 18/MDP) a PARTIAL.
    public func replyFrames(in dialect: MDPDialect, final: Bool = true) -> [[UInt8]] {
        guard let command = dialect.replyFrame(final: final) else { return frames }
        return (dialect.hasEmptyFrame ? [[]] : []) + [dialect.clientHeader, command] + (dialect.repliesNameService ? [service] : [])
            + (body.isEmpty ? [[]] : body)
    }

    /// Sends a reply with the frames ``replyFrames(in:final:)`` would have (a 7/MDP request's
    /// frames are its reply's), after whatever routing frames were sent before it with `.more`,
    /// without building arrays and without waiting. Body frames that are `Message`s leave
    /// without a copy.
    /// - Returns: `false` when the socket would block on the first frame, so nothing was sent.
    @discardableResult
    static func send(
        service: [UInt8], body: some Collection<some OutgoingFrame>, on socket: Socket, dialect: MDPDialect = .mdp7, final: Bool = true
    ) throws(ZMQError) -> Bool {
        let more: SendOptions = [.dontWait, .more]
        if dialect.hasEmptyFrame {
            guard try socket.sendEmptyFrame(options: more) else { return false }
            try socket.send(dialect.clientHeader, options: more)
        } else {
            guard try socket.send(dialect.clientHeader, options: more) else { return false }
        }
        if let command = dialect.replyFrame(final: final) { try socket.send(command, options: more) }
        if dialect.repliesNameService { try socket.send(service, options: more) }
        try socket.sendBody(body)
        return true
    }

    /// Decodes a request's frames in `dialect` as a DEALER sends them (a ROUTER adds its
    /// routing id first).
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    public init(frames: ArraySlice<[UInt8]>, dialect: MDPDialect = .mdp7) throws(ProtocolViolation) {
        // RFC 18's requests have no empty frame: counted from the one before the first.
        let start = frames.startIndex - (dialect.hasEmptyFrame ? 0 : 1)
        try Self.validate(frames, from: start, dialect: dialect)
        service = frames[start + dialect.serviceIndex]
        body = Array(frames[(start + dialect.bodyIndex)...])
    }

    /// Checks a request's frames from `start` (the empty frame, or where it would be in RFC 18's
    /// dialect) on in place; the service name is then at ``MDPDialect/serviceIndex`` from
    /// `start` and the body from ``MDPDialect/bodyIndex`` on.
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    static func validate(_ frames: some FrameList, from start: Int, dialect: MDPDialect = .mdp7) throws(ProtocolViolation) {
        let count = frames.endIndex - start
        // The empty frame (real or not), the header, the command byte in 18/MDP, the service, a body frame.
        let least = dialect.bodyIndex + 1
        guard count >= least else {
            let shown = dialect.hasEmptyFrame ? 0 : 1
            throw ProtocolViolation("expected at least \(least - shown) frames, got \(count - shown)")
        }
        if dialect.hasEmptyFrame {
            guard frames.frameIsEmpty(start) else { throw ProtocolViolation("frame 0 is not empty") }
        }
        guard frames.frame(start + 1, equals: dialect.clientHeader) else {
            throw ProtocolViolation("the protocol frame is not \(String(decoding: dialect.clientHeader, as: UTF8.self))")
        }
        if let command = dialect.requestByte, frames.singleByte(start + 2) != command {
            throw ProtocolViolation("the command is not \(dialect.rawValue)'s REQUEST (0x0\(command))")
        }
        guard !frames.frameIsEmpty(start + dialect.serviceIndex) else { throw ProtocolViolation("empty service name") }
    }
}
