import ZeroMQ

/// One MDP/Worker command, as exchanged between a worker's DEALER and the broker, in any of
/// the ``MDPDialect``s (7/MDP unless said otherwise).
///
/// Frames are as the DEALER sends and receives them: starting with the empty frame (but for
/// RFC 18's dialect, which has none), without the routing id a ROUTER adds. Client addresses
/// are opaque bytes, never text.
public enum WorkerCommand: Equatable, Sendable {
    /// Worker → broker: register for a service.
    case ready(service: [UInt8])
    /// Broker → worker: serve a client's request.
    case request(client: [UInt8], body: [[UInt8]])
    /// Worker → broker: a part of the reply, more to come (18/MDP only).
    case partial(client: [UInt8], body: [[UInt8]])
    /// Worker → broker: the reply to a client's request (7/MDP's REPLY, 18/MDP's FINAL).
    case reply(client: [UInt8], body: [[UInt8]])
    /// Either way: still alive.
    case heartbeat
    /// Either way: the conversation is over.
    case disconnect

    /// The command a frame's byte stands for; its byte in each dialect is ``MDPDialect/byte(of:)``.
    public enum Kind: Sendable, CaseIterable {
        /// READY.
        case ready
        /// REQUEST.
        case request
        /// PARTIAL (18/MDP only).
        case partial
        /// REPLY (7/MDP), FINAL (18/MDP).
        case reply
        /// HEARTBEAT.
        case heartbeat
        /// DISCONNECT.
        case disconnect
    }

    /// The command's kind.
    public var kind: Kind {
        switch self {
        case .ready: .ready
        case .request: .request
        case .partial: .partial
        case .reply: .reply
        case .heartbeat: .heartbeat
        case .disconnect: .disconnect
        }
    }

    /// The frames on the wire in 7/MDP.
    public var frames: [[UInt8]] { frames(in: .mdp7) }

    /// The frames on the wire in `dialect`: empty (unless RFC 18's), the header, the command
    /// byte, then the command's own frames. A request or reply with no body frames gets one
    /// empty body frame, since the RFCs require at least one.
    public func frames(in dialect: MDPDialect) -> [[UInt8]] {
        // Built in one array of the final size: brokers and workers encode one per message.
        var frames: [[UInt8]] = []
        switch self {
        case .ready(let service):
            frames.reserveCapacity(4)
            appendHead(to: &frames, dialect)
            frames.append(service)
        case .request(let client, let body), .partial(let client, let body), .reply(let client, let body):
            frames.reserveCapacity(5 + max(body.count, 1))
            appendHead(to: &frames, dialect)
            frames.append(client)
            frames.append([])
            if body.isEmpty { frames.append([]) } else { frames.append(contentsOf: body) }
        case .heartbeat, .disconnect:
            frames.reserveCapacity(3)
            appendHead(to: &frames, dialect)
        }
        return frames
    }

    private func appendHead(to frames: inout [[UInt8]], _ dialect: MDPDialect) {
        if dialect.hasEmptyFrame { frames.append([]) }
        frames.append(dialect.workerHeader)
        frames.append(dialect.frame(of: kind))
    }

    /// Sends a REQUEST, PARTIAL or REPLY with the frames ``frames(in:)`` would have, after
    /// whatever routing frames were sent before it with `.more`, without building arrays and
    /// without waiting. Body frames that are `Message`s leave without a copy.
    /// - Returns: `false` when the socket would block on the first frame, so nothing was sent.
    @discardableResult
    static func send(
        _ kind: Kind, client: [UInt8], body: some Collection<some OutgoingFrame>, on socket: Socket, dialect: MDPDialect = .mdp7
    ) throws(ZMQError) -> Bool {
        let more: SendOptions = [.dontWait, .more]
        if dialect.hasEmptyFrame {
            guard try socket.sendEmptyFrame(options: more) else { return false }
            try socket.send(dialect.workerHeader, options: more)
        } else {
            guard try socket.send(dialect.workerHeader, options: more) else { return false }
        }
        try socket.send(dialect.frame(of: kind), options: more)
        try socket.send(client, options: more)
        try socket.sendEmptyFrame(options: more)
        try socket.sendBody(body)
        return true
    }

    /// Where a REQUEST's, PARTIAL's or REPLY's client address is, counted from the command's
    /// empty frame (where it would be, in RFC 18's dialect).
    static let clientIndex = 3
    /// Where a REQUEST's, PARTIAL's or REPLY's body starts, counted as ``clientIndex`` is.
    static let bodyIndex = 5
    /// Where READY's service name is, counted as ``clientIndex`` is.
    static let serviceIndex = 3

    /// Decodes frames as a DEALER receives them (a ROUTER drops its routing id first) in `dialect`.
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    public init(frames: ArraySlice<[UInt8]>, dialect: MDPDialect = .mdp7) throws(ProtocolViolation) {
        // RFC 18's commands have no empty frame: counted from the one before the first.
        let start = frames.startIndex - (dialect.hasEmptyFrame ? 0 : 1)
        switch try Self.validatedKind(of: frames, from: start, dialect: dialect) {
        case .ready: self = .ready(service: frames[start + Self.serviceIndex])
        case .request: self = .request(client: frames[start + Self.clientIndex], body: Array(frames[(start + Self.bodyIndex)...]))
        case .partial: self = .partial(client: frames[start + Self.clientIndex], body: Array(frames[(start + Self.bodyIndex)...]))
        case .reply: self = .reply(client: frames[start + Self.clientIndex], body: Array(frames[(start + Self.bodyIndex)...]))
        case .heartbeat: self = .heartbeat
        case .disconnect: self = .disconnect
        }
    }

    /// Checks the frames from `start` (the empty frame, or where it would be in RFC 18's
    /// dialect) on against `dialect`'s rules for the command they carry, in place; its fields are
    /// then at ``clientIndex``, ``bodyIndex`` and ``serviceIndex`` from `start`.
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    static func validatedKind(of frames: some FrameList, from start: Int, dialect: MDPDialect = .mdp7) throws(ProtocolViolation) -> Kind {
        let count = frames.endIndex - start
        guard count >= 3 else { throw ProtocolViolation("expected at least \(dialect.hasEmptyFrame ? 3 : 2) frames, got \(count - (dialect.hasEmptyFrame ? 0 : 1))") }
        if dialect.hasEmptyFrame {
            guard frames.frameIsEmpty(start) else { throw ProtocolViolation("frame 0 is not empty") }
        }
        guard frames.frame(start + 1, equals: dialect.workerHeader) else {
            throw ProtocolViolation("the protocol frame is not \(String(decoding: dialect.workerHeader, as: UTF8.self))")
        }
        guard let byte = frames.singleByte(start + 2), let kind = dialect.workerKind(byte) else {
            throw ProtocolViolation("no \(dialect.rawValue) worker command byte after the protocol frame")
        }
        let rest = count - 3
        switch kind {
        case .ready:
            guard rest == 1 else { throw ProtocolViolation("READY has \(rest) frames after the command, expected 1") }
            guard !frames.frameIsEmpty(start + serviceIndex) else { throw ProtocolViolation("READY has an empty service name") }
        case .request, .partial, .reply:
            guard rest >= 3 else {
                throw ProtocolViolation("\(kind.name) has \(rest) frames after the command, expected at least 3")
            }
            guard frames.frameIsEmpty(start + clientIndex + 1) else { throw ProtocolViolation("no empty frame after the client address") }
        case .heartbeat, .disconnect:
            guard rest == 0 else { throw ProtocolViolation("\(kind.name) has \(rest) extra frames") }
        }
        return kind
    }
}

extension WorkerCommand.Kind {
    /// The command's name as the RFCs write it (`REPLY` for 18/MDP's FINAL too).
    var name: String {
        switch self {
        case .ready: "READY"
        case .request: "REQUEST"
        case .partial: "PARTIAL"
        case .reply: "REPLY"
        case .heartbeat: "HEARTBEAT"
        case .disconnect: "DISCONNECT"
        }
    }
}
