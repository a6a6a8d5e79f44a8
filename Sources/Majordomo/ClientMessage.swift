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

    /// Decodes frames as a DEALER receives them (a ROUTER drops its routing id first).
    /// - Throws: ``ProtocolViolation`` naming the first rule the frames break.
    public init(frames: ArraySlice<[UInt8]>) throws(ProtocolViolation) {
        let start = frames.startIndex
        guard frames.count >= 4 else { throw ProtocolViolation("expected at least 4 frames, got \(frames.count)") }
        guard frames[start].isEmpty else { throw ProtocolViolation("frame 0 is not empty") }
        guard frames[start + 1] == MDP.clientHeader else { throw ProtocolViolation("frame 1 is not MDPC01") }
        guard !frames[start + 2].isEmpty else { throw ProtocolViolation("empty service name") }
        service = frames[start + 2]
        body = Array(frames.dropFirst(3))
    }
}
