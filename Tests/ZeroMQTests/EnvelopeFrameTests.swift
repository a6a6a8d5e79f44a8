import Testing
import ZeroMQ

/// The envelope behaviour Majordomo relies on: a ROUTER hands binary routing ids (with 0x00
/// bytes) and empty frames through unchanged.
@Suite struct EnvelopeFrameTests {
    @Test func routerKeepsBinaryRoutingIDsAndEmptyFrames() throws {
        let context = try Context()
        let router = try context.socket(.router)
        try router.bind("inproc://envelope")
        let dealer = try context.socket(.dealer)
        let identity: [UInt8] = [0x00, 0x41, 0x00, 0xFF]
        try dealer.set(.routingID, to: identity)
        try dealer.connect("inproc://envelope")

        try dealer.send(multipart: [[], [0x01], []])
        let received = try #require(try router.receiveMultipart())
        #expect(received == [identity, [], [0x01], []])

        try router.send(multipart: [identity, [], [0x02]])
        #expect(try dealer.receiveMultipart() == [[], [0x02]])
    }
}
