import Dispatch
import Foundation
import LyceumTestSupport
import LyceumLifecycle
import LyceumServer
import Majordomo
@testable import ServiceHosting
import Testing
import ZeroMQ

/// The frame handler behind a real broker: replies given during the call and later ones both
/// reach the client, and bodies of other than one frame are refused.
struct FrameHandlerTests {
    /// Runs `body` with a client of a broker whose local service `echo` answers with `answer`.
    private func withEcho(_ answer: @escaping FrameHandler.Answer, _ body: (Client) throws -> Void) throws {
        let context = try Context()
        let broker = try Broker(
            endpoints: ["tcp://127.0.0.1:*"],
            configuration: BrokerConfiguration(localServices: [LocalService(name: "echo", handler: FrameHandler.handler(answer))]),
            context: context)
        let thread = ComponentThread(broker, name: "frame-handler-broker")
        defer { thread.stop() }
        let client = Client(endpoint: try broker.waitUntilBound()[0], context: context)
        defer { client.close() }
        try body(client)
    }

    @Test func oneFrameGoesToTheServiceUntouchedAndTheReplyAtOnce() throws {
        try withEcho({ frame, _, reply in reply(Array("echo:".utf8) + frame) }) { client in
            let reply = try client.call("echo", body: [[0xFF, 0x00]])
            #expect(reply == [Array("echo:".utf8) + [0xFF, 0x00]])
        }
    }

    @Test func aReplyGivenLaterFromAnotherThreadArrivesToo() throws {
        try withEcho({ frame, _, reply in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { reply(Array("later:".utf8) + frame) }
        }) { client in
            let reply = try client.call("echo", body: [Array("x".utf8)])
            #expect(reply == [Array("later:x".utf8)])
        }
    }

    // No body at all cannot be sent: MDP carries an empty body as one empty frame.
    @Test(arguments: [2, 3])
    func anyOtherNumberOfFramesIsABadRequest(frames: Int) throws {
        try withEcho({ frame, _, reply in reply(frame) }) { client in
            let reply = try client.call("echo", body: Array(repeating: Array("{}".utf8), count: frames))
            try #require(reply.count == 1)
            let error = try #require(try parse(reply[0])["error"] as? [String: Any])
            #expect(error["code"] as? String == "bad_request")
            #expect((error["message"] as? String)?.contains("\(frames) frames") == true)
        }
    }
}
