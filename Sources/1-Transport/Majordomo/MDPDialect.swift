/// The three Majordomo dialects Lyceum's broker speaks on the same endpoints, told apart by a
/// message's first frames (protocol/majordomo.md, "Three dialects"):
///
/// - ``mdp7``: 7/MDP, `MDPC01`/`MDPW01`, every command after an empty frame.
/// - ``rfc18``: 18/MDP as RFC 18 writes it, `MDPC02`/`MDPW02`, no empty frame; a client's
///   REQUEST is 0x01, its replies PARTIAL 0x02 and FINAL 0x03, each with the service frame.
/// - ``majortomo``: 18/MDP as majortomo 0.2.0 speaks it: the empty frame kept, a client's
///   commands numbered like a worker's (REQUEST 0x02, PARTIAL 0x03, FINAL 0x04), replies
///   without the service frame.
///
/// Both 18/MDP dialects number worker commands alike: READY 0x01, REQUEST 0x02, PARTIAL 0x03,
/// FINAL 0x04, HEARTBEAT 0x05, DISCONNECT 0x06. Frame positions are counted from `start`, where
/// the command's empty frame is, or would be in ``rfc18``, which has none.
public enum MDPDialect: String, Sendable, CaseIterable {
    /// 7/MDP.
    case mdp7 = "7/MDP"
    /// 18/MDP as RFC 18 writes it.
    case rfc18 = "18/MDP"
    /// 18/MDP as majortomo 0.2.0 speaks it.
    case majortomo = "18/MDP-majortomo"

    /// Whether commands start with an empty frame (all but ``rfc18``).
    public var hasEmptyFrame: Bool { self != .rfc18 }

    /// Whether replies may be streamed to its clients (PARTIALs, then a FINAL).
    public var streamsReplies: Bool { self != .mdp7 }

    /// The protocol frame of its client commands.
    public var clientHeader: [UInt8] { self == .mdp7 ? MDP.clientHeader : MDP.clientHeader18 }

    /// The protocol frame of its worker commands.
    public var workerHeader: [UInt8] { self == .mdp7 ? MDP.workerHeader : MDP.workerHeader18 }

    /// What a ROUTER's message is, from its first frames (frame 0 is the routing id): whose
    /// command, in which dialect, and where it starts; `nil` when it is none of them.
    static func classify(_ frames: some FrameList) -> (peer: Peer, dialect: MDPDialect, start: Int)? {
        let count = frames.endIndex
        guard count >= 3 else { return nil }
        // Without an empty frame: RFC 18's, or a 7/MDP worker's command missing it (refused by
        // the worker codec, with a DISCONNECT, as before).
        if frames.frame(1, equals: MDP.clientHeader18) { return (.client, .rfc18, 0) }
        if frames.frame(1, equals: MDP.workerHeader18) { return (.worker, .rfc18, 0) }
        if frames.frame(1, equals: MDP.workerHeader) { return (.worker, .mdp7, 1) }
        if frames.frameIsEmpty(1) {
            if frames.frame(2, equals: MDP.workerHeader) { return (.worker, .mdp7, 1) }
            if frames.frame(2, equals: MDP.workerHeader18) { return (.worker, .majortomo, 1) }
        }
        // Routing frames before the empty one (a proxy's, or an AsyncClient's request tag) are
        // an envelope, returned with the reply.
        guard let delimiter = (1..<count).first(where: { frames.frameIsEmpty($0) }), delimiter + 1 < count else { return nil }
        if frames.frame(delimiter + 1, equals: MDP.clientHeader) { return (.client, .mdp7, delimiter) }
        if frames.frame(delimiter + 1, equals: MDP.clientHeader18) { return (.client, .majortomo, delimiter) }
        return nil
    }

    /// Who sent a message: a client or a worker.
    enum Peer: Equatable {
        /// A client's request.
        case client
        /// A worker's command.
        case worker
    }

    // MARK: Client commands

    /// The command byte of a client's REQUEST; `nil` in 7/MDP, which has none.
    var requestByte: UInt8? {
        switch self {
        case .mdp7: nil
        case .rfc18: 0x01
        case .majortomo: 0x02
        }
    }

    /// The command frame of a reply to a client: PARTIAL or FINAL; `nil` in 7/MDP.
    func replyFrame(final: Bool) -> [UInt8]? {
        switch self {
        case .mdp7: nil
        case .rfc18: final ? Self.rfcFinal : Self.rfcPartial
        case .majortomo: final ? Self.majortomoFinal : Self.majortomoPartial
        }
    }

    private static let rfcPartial: [UInt8] = [0x02]
    private static let rfcFinal: [UInt8] = [0x03]
    private static let majortomoPartial: [UInt8] = [0x03]
    private static let majortomoFinal: [UInt8] = [0x04]

    /// Where a client request's service name is, from `start`.
    var serviceIndex: Int { self == .mdp7 ? 2 : 3 }

    /// Where a client request's body starts, from `start`.
    var bodyIndex: Int { serviceIndex + 1 }

    /// Whether a reply carries the service frame (all but ``majortomo``).
    var repliesNameService: Bool { self != .majortomo }

    // MARK: Worker commands

    /// The command byte of `kind`; `nil` for PARTIAL in 7/MDP, which has none.
    public func byte(of kind: WorkerCommand.Kind) -> UInt8? {
        guard self != .mdp7 else {
            switch kind {
            case .ready: return 0x01
            case .request: return 0x02
            case .reply: return 0x03
            case .heartbeat: return 0x04
            case .disconnect: return 0x05
            case .partial: return nil
            }
        }
        switch kind {
        case .ready: return 0x01
        case .request: return 0x02
        case .partial: return 0x03
        case .reply: return 0x04
        case .heartbeat: return 0x05
        case .disconnect: return 0x06
        }
    }

    /// The worker command `byte` stands for; `nil` when none.
    func workerKind(_ byte: UInt8) -> WorkerCommand.Kind? {
        WorkerCommand.Kind.allCases.first { self.byte(of: $0) == byte }
    }

    /// The command frame of `kind`, one array per dialect and kind rather than one per message.
    /// PARTIAL in 7/MDP, which has none, is an empty frame: never sent, since no 7/MDP peer
    /// is sent a PARTIAL.
    func frame(of kind: WorkerCommand.Kind) -> [UInt8] {
        byte(of: kind).map { Self.commandFrames[Int($0)] } ?? []
    }

    private static let commandFrames: [[UInt8]] = (0...6).map { [UInt8($0)] }
}
