import Majordomo
import Testing

/// The three dialects' frames (protocol/majordomo.md, "Three dialects"), without sockets: each
/// command encodes to the frames the RFCs and majortomo 0.2.0 put on the wire and decodes back,
/// and malformed frames are violations.
@Suite struct DialectCodecTests {
    static let address: [UInt8] = [0x00, 0x6B, 0x8B, 0x45, 0x67]

    @Test(arguments: [
        (MDPDialect.rfc18, [[UInt8]]([bytes("MDPC02"), [0x01], bytes("books"), bytes("{}")])),
        (.majortomo, [[], bytes("MDPC02"), [0x02], bytes("books"), bytes("{}")]),
        (.mdp7, [[], bytes("MDPC01"), bytes("books"), bytes("{}")]),
    ])
    func requestsRoundTrip(_ dialect: MDPDialect, _ frames: [[UInt8]]) throws {
        let request = ClientMessage(service: bytes("books"), body: [bytes("{}")])
        #expect(request.requestFrames(in: dialect) == frames)
        #expect(try ClientMessage(frames: frames[...], dialect: dialect) == request)
    }

    @Test func repliesSayPartialOrFinalInTheClientsNumbering() {
        let reply = ClientMessage(service: bytes("books"), body: [bytes("page")])
        #expect(reply.replyFrames(in: .rfc18, final: false) == [bytes("MDPC02"), [0x02], bytes("books"), bytes("page")])
        #expect(reply.replyFrames(in: .rfc18) == [bytes("MDPC02"), [0x03], bytes("books"), bytes("page")])
        // majortomo's client numbers like a worker and reads no service frame.
        #expect(reply.replyFrames(in: .majortomo, final: false) == [[], bytes("MDPC02"), [0x03], bytes("page")])
        #expect(reply.replyFrames(in: .majortomo) == [[], bytes("MDPC02"), [0x04], bytes("page")])
        #expect(reply.replyFrames(in: .mdp7) == reply.frames)
    }

    @Test(arguments: [
        (WorkerCommand.ready(service: bytes("books")), [[UInt8]]([bytes("MDPW02"), [0x01], bytes("books")])),
        (.request(client: address, body: [bytes("a")]), [bytes("MDPW02"), [0x02], address, [], bytes("a")]),
        (.partial(client: address, body: [bytes("b")]), [bytes("MDPW02"), [0x03], address, [], bytes("b")]),
        (.reply(client: address, body: [bytes("c")]), [bytes("MDPW02"), [0x04], address, [], bytes("c")]),
        (.heartbeat, [bytes("MDPW02"), [0x05]]),
        (.disconnect, [bytes("MDPW02"), [0x06]]),
    ])
    func workerCommandsRoundTripInBothEighteenDialects(_ command: WorkerCommand, _ rfcFrames: [[UInt8]]) throws {
        #expect(command.frames(in: .rfc18) == rfcFrames)
        #expect(try WorkerCommand(frames: rfcFrames[...], dialect: .rfc18) == command)
        // majortomo's are RFC 18's after an empty frame.
        let majortomoFrames = [[]] + rfcFrames
        #expect(command.frames(in: .majortomo) == majortomoFrames)
        #expect(try WorkerCommand(frames: majortomoFrames[...], dialect: .majortomo) == command)
    }

    @Test(arguments: [
        (MDPDialect.rfc18, [[UInt8]]([bytes("MDPC02"), [0x02], bytes("books"), bytes("{}")])),  // majortomo's REQUEST byte
        (.rfc18, [bytes("MDPC02"), [0x01], bytes("books")]),                                     // no body frame
        (.rfc18, [bytes("MDPC02"), [0x01], [], bytes("{}")]),                                    // empty service
        (.rfc18, [bytes("MDPC02"), [0x01, 0x01], bytes("books"), bytes("{}")]),                   // two-byte command
        (.majortomo, [[], bytes("MDPC02"), [0x01], bytes("books"), bytes("{}")]),                // RFC 18's REQUEST byte
        (.majortomo, [[0x00], bytes("MDPC02"), [0x02], bytes("books"), bytes("{}")]),            // frame 0 not empty
        (.majortomo, [[], bytes("MDPC01"), [0x02], bytes("books"), bytes("{}")]),                // 7/MDP's header
    ])
    func malformedRequestsAreViolations(_ dialect: MDPDialect, _ frames: [[UInt8]]) {
        #expect(throws: ProtocolViolation.self) { try ClientMessage(frames: frames[...], dialect: dialect) }
    }

    @Test(arguments: [
        (MDPDialect.rfc18, [[UInt8]]([bytes("MDPW02"), [0x07]])),                       // no such command
        (.rfc18, [bytes("MDPW02"), [0x04], address, [0x01], bytes("x")]),              // no empty frame after the address
        (.rfc18, [bytes("MDPW02"), [0x03], address, []]),                               // PARTIAL without a body
        (.rfc18, [bytes("MDPW02"), [0x05], bytes("x")]),                                // HEARTBEAT with a frame
        (.rfc18, [bytes("MDPW01"), [0x01], bytes("books")]),                            // 7/MDP's header
        (.majortomo, [[], bytes("MDPW02"), [0x01], bytes("a"), bytes("b")]),            // READY with two names
        (.majortomo, [bytes("MDPW02"), [0x05]]),                                        // the empty frame missing
        (.mdp7, [[], bytes("MDPW01"), [0x06]]),                                         // 18/MDP's DISCONNECT byte
    ])
    func malformedWorkerCommandsAreViolations(_ dialect: MDPDialect, _ frames: [[UInt8]]) {
        #expect(throws: ProtocolViolation.self) { try WorkerCommand(frames: frames[...], dialect: dialect) }
    }

    @Test func sevenHasNoPartialAndEighteenRenumbers() {
        #expect(WorkerCommand.Kind.allCases.compactMap { MDPDialect.mdp7.byte(of: $0) } == [0x01, 0x02, 0x03, 0x04, 0x05])
        #expect(WorkerCommand.Kind.allCases.map { MDPDialect.majortomo.byte(of: $0) } == [0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
        #expect(MDPDialect.mdp7.byte(of: .partial) == nil)
        #expect(MDPDialect.rfc18.byte(of: .heartbeat) == 0x05 && MDPDialect.mdp7.byte(of: .heartbeat) == 0x04)
    }
}
