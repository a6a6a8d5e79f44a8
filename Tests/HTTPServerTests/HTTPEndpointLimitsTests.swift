import HTTPServer
import LyceumTestSupport
import Testing

/// The endpoint over a real loopback socket, fed what a hostile or broken peer sends: every such
/// request gets a bounded answer or a closed connection, and never holds the loop from others.
struct HTTPEndpointLimitsTests {
    @Test func aWellFormedRequestIsAnsweredWithWhatWasParsed() throws {
        let response = try TestEndpoint().exchange("GET /hello?b=2&a=x%20y+z&a=ignored HTTP/1.1\r\nHost: test\r\nUser-Agent:  probe \r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(response)")
        #expect(response.hasSuffix("\r\n\r\nGET /hello a=x y z&b=2 probe"), "\(response)")
    }

    @Test(arguments: [
        "NONSENSE\r\n\r\n", "GET\r\n\r\n", "GET relative HTTP/1.1\r\n\r\n", "GET / FTP/1.0\r\n\r\n",
        "GET / HTTP/1.1 extra\r\n\r\n", "\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
    ])
    func aBadRequestLineIsAnswered400(request: String) throws {
        let response = try TestEndpoint().exchange(request)
        #expect(response.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(request.debugDescription): \(response)")
    }

    @Test func headersBeyondTheLimitAreAnswered431AndTheConnectionClosed() throws {
        let endpoint = try TestEndpoint()
        // 16 KiB is the limit; the headers never end, so only the limit answers them.
        let response = try endpoint.exchange("GET / HTTP/1.1\r\n" + String(repeating: "X-Padding: \(String(repeating: "p", count: 100))\r\n", count: 200))
        #expect(response.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "\(response.prefix(200))")
        // The endpoint still answers the next peer.
        #expect(try endpoint.exchange("GET /next HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    @Test func aPeerThatClosesItsSideEarlyIsAnsweredWhatItSent() throws {
        let endpoint = try TestEndpoint()
        let peer = try RawPeer(port: endpoint.port)
        try peer.send("GET /early HTTP/1.1\r\n")
        peer.closeWriting()
        let response = try peer.readToEnd()
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n") && response.hasSuffix("GET /early  "), "\(response)")
    }

    @Test func aSlowPeerIsCutAtTheRequestTimeoutAndHoldsNoOtherPeer() throws {
        let endpoint = try TestEndpoint(limits: HTTPLoop.Limits(maxConnections: 8, requestTimeout: .milliseconds(300)))
        let slow = try RawPeer(port: endpoint.port)
        try slow.send("GET /slow HTTP/1.1\r\nHost: te")
        // While the slow peer's request is open, another is answered at once.
        #expect(try endpoint.exchange("GET /other HTTP/1.1\r\n\r\n").hasSuffix("GET /other  "))
        // The slow one is closed unanswered once its time is up.
        #expect(try slow.readToEnd() == "")
    }

    @Test func pastTheConnectionLimitTheIdlestConnectionIsClosed() throws {
        let endpoint = try TestEndpoint(limits: HTTPLoop.Limits(maxConnections: 1, requestTimeout: .seconds(60)))
        let idle = try RawPeer(port: endpoint.port)
        try idle.send("GET /idle HTTP/1.1\r\n")
        #expect(try endpoint.exchange("GET /new HTTP/1.1\r\n\r\n").hasSuffix("GET /new  "))
        #expect(try idle.readToEnd() == "", "the idle connection is closed unanswered to make room")
    }
}
