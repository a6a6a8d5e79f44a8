import Majordomo
import Testing

/// The frame codecs against the RFC's tables, without sockets.
@Suite struct CodecTests {
    static let address: [UInt8] = [0x00, 0x01, 0x00]

    @Test(arguments: [
        (WorkerCommand.ready(service: bytes("echo")), [[UInt8]]([[], bytes("MDPW01"), [0x01], bytes("echo")])),
        (.request(client: address, body: [bytes("a"), []]), [[], bytes("MDPW01"), [0x02], address, [], bytes("a"), []]),
        (.reply(client: address, body: [bytes("b")]), [[], bytes("MDPW01"), [0x03], address, [], bytes("b")]),
        (.heartbeat, [[], bytes("MDPW01"), [0x04]]),
        (.disconnect, [[], bytes("MDPW01"), [0x05]]),
    ])
    func workerCommandsRoundTrip(_ command: WorkerCommand, _ frames: [[UInt8]]) throws {
        #expect(command.frames == frames)
        #expect(try WorkerCommand(frames: frames[...]) == command)
    }

    @Test func emptyBodiesTravelAsOneEmptyFrame() throws {
        #expect(WorkerCommand.reply(client: Self.address, body: []).frames.count == 6)
        #expect(ClientMessage(service: bytes("echo"), body: []).frames == [[], bytes("MDPC01"), bytes("echo"), []])
    }

    @Test(arguments: [
        [[UInt8]]([[], bytes("MDPW01")]),
        [[0x00], bytes("MDPW01"), [0x04]],
        [[], bytes("MDPC01"), [0x04]],
        [[], bytes("MDPW01"), [0x00]],
        [[], bytes("MDPW01"), [0x06]],
        [[], bytes("MDPW01"), []],
        [[], bytes("MDPW01"), [0x02], address, [0x01], bytes("x")],
        [[], bytes("MDPW01"), [0x03], address, []],
        [[], bytes("MDPW01"), [0x05], bytes("x")],
        [[], bytes("MDPW01"), [0x01], bytes("a"), bytes("b")],
    ])
    func invalidWorkerFramesAreViolations(_ frames: [[UInt8]]) {
        #expect(throws: ProtocolViolation.self) { try WorkerCommand(frames: frames[...]) }
    }

    @Test func clientMessagesRoundTripAndRejectBadFrames() throws {
        let message = ClientMessage(service: bytes("echo"), body: [bytes("x"), [0x00]])
        #expect(message.frames == [[], bytes("MDPC01"), bytes("echo"), bytes("x"), [0x00]])
        #expect(try ClientMessage(frames: message.frames[...]) == message)
        for bad: [[UInt8]] in [[[], bytes("MDPC01"), bytes("echo")], [[], bytes("MDPC01"), [], bytes("x")],
                               [[], bytes("MDPW01"), bytes("echo"), bytes("x")], [[0x01], bytes("MDPC01"), bytes("echo"), bytes("x")]] {
            #expect(throws: ProtocolViolation.self) { try ClientMessage(frames: bad[...]) }
        }
    }

    @Test func brokerRejectionsHaveADocumentedFrame() {
        let rejection = BrokerRejection(code: .queueFull, text: "full up")
        #expect(rejection.frame == [0x00] + bytes("MDP-ERROR queue_full full up"))
        #expect(BrokerRejection(body: [rejection.frame]) == rejection)
        #expect(BrokerRejection(body: [bytes("MDP-ERROR queue_full not marked")]) == nil)
        #expect(BrokerRejection(body: [rejection.frame, []]) == nil, "a rejection is exactly one frame")
        #expect(BrokerRejection(body: [[0x00] + bytes("MDP-ERROR unheard-of x")]) == nil)
    }

    /// Brokers before the snake_case change spelled the codes in kebab-case; clients still read them.
    @Test func rejectionsInTheOldKebabSpellingStillMapToTheirCodes() {
        for (word, code) in [("queue-full", BrokerRejection.Code.queueFull), ("service-unknown", .serviceUnknown), ("overloaded", .overloaded)] {
            let old = BrokerRejection(body: [[0x00] + bytes("MDP-ERROR \(word) from an older broker")])
            #expect(old == BrokerRejection(code: code, text: "from an older broker"), "\(word)")
        }
    }
}
