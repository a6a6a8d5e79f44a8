import Glibc
import Testing
import ZeroMQ

/// libzmq 4.3.4 starts a ROUTER's automatic routing ids at `rand()` and never seeds it, so every
/// process used to start at the same value; a peer that knows it can claim the next id and make
/// libzmq abort (issue 14, finding 1).
@Suite("Automatic routing ids start unpredictably")
struct RoutingIDSeedTests {
    /// glibc's `rand()` after `srand(1)` (its default) yields 0x6B8B4567 and then an even value,
    /// which libzmq combines into this first automatic id: the one `lyceum broker` used to give
    /// its first peer in every run.
    static let unseededFirstID: [UInt8] = [0x00, 0x6B, 0x8B, 0x45, 0x67]

    @Test("A context reseeds rand(), so a ROUTER's first automatic id is not the unseeded one")
    func contextSeedsTheCounter() throws {
        srand(1)
        let context = try Context()
        let router = try context.socket(.router)
        try router.bind("inproc://routing-id-seed")
        let dealer = try context.socket(.dealer)
        try dealer.connect("inproc://routing-id-seed")
        try dealer.send([UInt8]("hello".utf8))
        try router.set(.receiveTimeout, to: 5000)
        let frames = try #require(try router.receiveMultipart())
        let id = try #require(frames.first)
        #expect(id.count == 5 && id.first == 0, "an automatic id: 0x00 and a 4-byte counter")
        #expect(id != Self.unseededFirstID)
    }
}
