import Foundation
import LyceumServer
import Testing

struct FrameHandlerTests {
    private let echo = FrameHandler.handler { Array("echo:".utf8) + $0 }

    @Test func oneFrameGoesToTheServiceUntouched() {
        #expect(echo([[0xFF, 0x00]]) == [Array("echo:".utf8) + [0xFF, 0x00]])
    }

    @Test(arguments: [0, 2, 3])
    func anyOtherNumberOfFramesIsABadRequest(frames: Int) throws {
        let reply = echo(Array(repeating: Array("{}".utf8), count: frames))
        try #require(reply.count == 1)
        let error = try #require(try parse(reply[0])["error"] as? [String: Any])
        #expect(error["code"] as? String == "bad_request")
        #expect((error["message"] as? String)?.contains("\(frames) frames") == true)
    }
}
