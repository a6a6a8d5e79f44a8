import ZeroMQ

/// One MDP/Worker command, as exchanged between a worker's DEALER and the broker.
///
/// Frames are as the DEALER sends and receives them: starting with the empty frame, without
/// the routing id a ROUTER adds. Client addresses are opaque bytes, never text.
public enum WorkerCommand: Equatable, Sendable {
    /// Worker → broker: register for a service (0x01).
    case ready(service: [UInt8])
    /// Broker → worker: serve a client's request (0x02).
    case request(client: [UInt8], body: [[UInt8]])
    /// Worker → broker: the reply to a client's request (0x03).
    case reply(client: [UInt8], body: [[UInt8]])
    /// Either way: still alive (0x04).
    case heartbeat
    /// Either way: the conversation is over (0x05).
    case disconnect

    /// The command byte of frame 2.
    public enum Kind: UInt8, Sendable {
        /// READY.
        case ready = 0x01
        /// REQUEST.
        case request = 0x02
        /// REPLY.
        case reply = 0x03
        /// HEARTBEAT.
        case heartbeat = 0x04
        /// DISCONNECT.
        case disconnect = 0x05

        /// The command's frame, one array per kind rather than one per message.
        var frame: [UInt8] {
            switch self {
            case .ready: Self.readyFrame
            case .request: Self.requestFrame
            case .reply: Self.replyFrame
            case .heartbeat: Self.heartbeatFrame
            case .disconnect: Self.disconnectFrame
            }
        }

        private static let readyFrame = [Kind.ready.rawValue]
        private static let requestFrame = [Kind.request.rawValue]
        private static let replyFrame = [Kind.reply.rawValue]
        private static let heartbeatFrame = [Kind.heartbeat.rawValue]
        private static let disconnectFrame = [Kind.disconnect.rawValue]
    }

    /// The command's kind.
    public var kind: Kind {
        switch self {
        case .ready: .ready
        case .request: .request
        case .reply: .reply
        case .heartbeat: .heartbeat
        case .disconnect: .disconnect
        }
    }

    /// The frames on the wire: empty, `MDPW01`, command byte, then the command's own frames.
    /// A request or reply with no body frames gets one empty body frame, since the RFC
    /// requires at least one.
    public var frames: [[UInt8]] {
        // Built in one array of the final size: brokers and workers encode one per message.
        var frames: [[UInt8]] = []
        switch self {
        case .ready(let service):
            frames.reserveCapacity(4)
            appendHead(to: &frames)
            frames.append(service)
        case .request(let client, let body), .reply(let client, let body):
            frames.reserveCapacity(5 + max(body.count, 1))
            appendHead(to: &frames)
            frames.append(client)
            frames.append([])
            if body.isEmpty { frames.append([]) } else { frames.append(contentsOf: body) }
        case .heartbeat, .disconnect:
            frames.reserveCapacity(3)
            appendHead(to: &frames)
        }
        return frames
    }

    private func appendHead(to frames: inout [[UInt8]]) {
        frames.append([])
        frames.append(MDP.workerHeader)
        frames.append(kind.frame)
    }

    /// Sends a REQUEST or REPLY with the frames ``frames`` would have, after whatever routing
    /// frames were sent before it with `.more`, without building arrays and without waiting.
    /// Body frames that are `Message`s leave without a copy.
    /// - Returns: `false` when the socket would block on the first frame, so nothing was sent.
    @discardableResult
    static func send(
        _ kind: Kind, client: [UInt8], body: some Collection<some OutgoingFrame>, on socket: Socket
    ) throws(ZMQError) -> Bool {
        let more: SendOptions = [.dontWait, .more]
        guard try socket.sendEmptyFrame(options: more) else { return false }
        try socket.send(MDP.workerHeader, options: more)
        try socket.send(kind.frame, options: more)
        try socket.send(client, options: more)
        try socket.sendEmptyFrame(options: more)
        try socket.sendBody(body)
        return true
    }

    /// Where a REQUEST's or REPLY's client address is, counted from the command's empty frame.
    static let clientIndex = 3
    /// Where a REQUEST's or REPLY's body starts, counted from the command's empty frame.
    static let bodyIndex = 5
    /// Where READY's service name is, counted from the command's empty frame.
    static let serviceIndex = 3

    /// Decodes frames as a DEALER receives them (a ROUTER drops its routing id first).
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    public init(frames: ArraySlice<[UInt8]>) throws(ProtocolViolation) {
        let start = frames.startIndex
        switch try Self.validatedKind(of: frames, from: start) {
        case .ready: self = .ready(service: frames[start + Self.serviceIndex])
        case .request: self = .request(client: frames[start + Self.clientIndex], body: Array(frames[(start + Self.bodyIndex)...]))
        case .reply: self = .reply(client: frames[start + Self.clientIndex], body: Array(frames[(start + Self.bodyIndex)...]))
        case .heartbeat: self = .heartbeat
        case .disconnect: self = .disconnect
        }
    }

    /// Checks the frames from `start` (the empty frame) on against the rules for the command
    /// they carry, in place; its fields are then at ``clientIndex``, ``bodyIndex`` and
    /// ``serviceIndex`` from `start`.
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    static func validatedKind(of frames: some FrameList, from start: Int) throws(ProtocolViolation) -> Kind {
        let count = frames.endIndex - start
        guard count >= 3 else { throw ProtocolViolation("expected at least 3 frames, got \(count)") }
        guard frames.frameIsEmpty(start) else { throw ProtocolViolation("frame 0 is not empty") }
        guard frames.frame(start + 1, equals: MDP.workerHeader) else { throw ProtocolViolation("frame 1 is not MDPW01") }
        guard let byte = frames.singleByte(start + 2), let kind = Kind(rawValue: byte) else {
            throw ProtocolViolation("frame 2 is not a command byte 0x01-0x05")
        }
        let rest = count - 3
        switch kind {
        case .ready:
            guard rest == 1 else { throw ProtocolViolation("READY has \(rest) frames after the command, expected 1") }
            guard !frames.frameIsEmpty(start + serviceIndex) else { throw ProtocolViolation("READY has an empty service name") }
        case .request, .reply:
            guard rest >= 3 else {
                throw ProtocolViolation("\(kind == .request ? "REQUEST" : "REPLY") has \(rest) frames after the command, expected at least 3")
            }
            guard frames.frameIsEmpty(start + clientIndex + 1) else { throw ProtocolViolation("no empty frame after the client address") }
        case .heartbeat, .disconnect:
            guard rest == 0 else { throw ProtocolViolation("\(kind == .heartbeat ? "HEARTBEAT" : "DISCONNECT") has \(rest) extra frames") }
        }
        return kind
    }
}
