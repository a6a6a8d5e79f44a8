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

    /// Decodes frames as a DEALER receives them (a ROUTER drops its routing id first).
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    public init(frames: ArraySlice<[UInt8]>) throws(ProtocolViolation) {
        let start = frames.startIndex
        guard frames.count >= 3 else { throw ProtocolViolation("expected at least 3 frames, got \(frames.count)") }
        guard frames[start].isEmpty else { throw ProtocolViolation("frame 0 is not empty") }
        guard frames[start + 1] == MDP.workerHeader else { throw ProtocolViolation("frame 1 is not MDPW01") }
        guard frames[start + 2].count == 1, let kind = Kind(rawValue: frames[start + 2][0]) else {
            throw ProtocolViolation("frame 2 is not a command byte 0x01-0x05")
        }
        let rest = frames.dropFirst(3)
        switch kind {
        case .ready:
            guard rest.count == 1 else { throw ProtocolViolation("READY has \(rest.count) frames after the command, expected 1") }
            guard !rest[rest.startIndex].isEmpty else { throw ProtocolViolation("READY has an empty service name") }
            self = .ready(service: rest[rest.startIndex])
        case .request, .reply:
            guard rest.count >= 3 else {
                throw ProtocolViolation("\(kind == .request ? "REQUEST" : "REPLY") has \(rest.count) frames after the command, expected at least 3")
            }
            let client = rest[rest.startIndex]
            guard rest[rest.startIndex + 1].isEmpty else { throw ProtocolViolation("no empty frame after the client address") }
            let body = Array(rest.dropFirst(2))
            self = kind == .request ? .request(client: client, body: body) : .reply(client: client, body: body)
        case .heartbeat, .disconnect:
            guard rest.isEmpty else { throw ProtocolViolation("\(kind == .heartbeat ? "HEARTBEAT" : "DISCONNECT") has \(rest.count) extra frames") }
            self = kind == .heartbeat ? .heartbeat : .disconnect
        }
    }
}
