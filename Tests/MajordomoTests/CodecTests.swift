import Access
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

@Suite("CallerIdentity")
struct CallerIdentityTests {
    @Test func principalsRoundTripAfterTheEightByteAddress() {
        for principal in [
            Principal(name: "ada-phone", role: .learner, learners: ["ada", "bob"]),
            Principal(name: "", role: .app), Principal(name: "ünïcode-név", role: .admin),
        ] {
            let frame = [UInt8](repeating: 7, count: CallerIdentity.addressSize) + CallerIdentity.encode(principal)
            #expect(CallerIdentity.principal(inClientAddress: frame) == principal)
        }
        #expect(CallerIdentity.principal(inClientAddress: [UInt8](repeating: 7, count: 8)) == nil)
    }

    @Test func anEncodingIsBoundedAndOnlyLosesRightsWhenCut() {
        let learners = Set((0..<40).map { "learner-\($0)" } + [String(repeating: "x", count: 300)])
        let principal = Principal(name: String(repeating: "n", count: 400), role: .learner, learners: learners)
        let encoded = CallerIdentity.encode(principal)
        #expect(encoded.count <= CallerIdentity.maxEncodedSize)
        let decoded = CallerIdentity.decode(encoded)
        #expect(decoded?.name == String(repeating: "n", count: 255))
        #expect(decoded?.learners.count == CallerIdentity.maxLearners)
        #expect(decoded.map { $0.learners.isSubset(of: learners) } == true)
    }

    @Test(arguments: [
        [], [2, 3] + Array("app".utf8) + [0, 0], [1, 4] + Array("root".utf8) + [0, 0], [1, 3] + Array("app".utf8) + [5, 0x61],
        [1, 3] + Array("app".utf8) + [0, 33], [1, 7] + Array("learner".utf8) + [0, 1, 0], [1, 3] + Array("app".utf8) + [0, 0, 9],
    ] as [[UInt8]])
    func malformedIdentitiesDecodeToNothing(_ bytes: [UInt8]) {
        #expect(CallerIdentity.decode(bytes) == nil)
    }
}
