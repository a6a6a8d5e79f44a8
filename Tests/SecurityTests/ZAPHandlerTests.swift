import Foundation
import LyceumTestSupport
import Security
import Synchronization
import Testing
import ZeroMQ

@Suite("ZAPHandler")
struct ZAPHandlerTests {
    /// A CURVE echo server on a free loopback port, guarded by a ZAP handler that lets in only
    /// `allowed` and names it `trusted-client`.
    final class Fixture {
        let context: Context
        let server = try! CurveKeyPair.generate()
        let allowed = try! CurveKeyPair.generate()
        let handler: ZAPHandler
        let handlerThread: ComponentThreadHandle
        let requests = RequestLog()

        init() throws {
            context = try Context()
            let allowedKey = allowed.publicKey
            let log = requests
            handler = try ZAPHandler(context: context) { request in
                log.append(request)
                return request.curvePublicKey == allowedKey ? .allow(userID: "trusted-client") : .deny(reason: "unknown key")
            }
            handlerThread = ComponentThreadHandle(handler)
            try handler.waitUntilReady(timeout: .seconds(5))
        }

        deinit { handlerThread.stop() }
    }

    final class RequestLog: Sendable {
        private let requests = Mutex<[ZAPRequest]>([])
        func append(_ request: ZAPRequest) { requests.withLock { $0.append(request) } }
        var all: [ZAPRequest] { requests.withLock { $0 } }
    }

    /// Runs `service` on a thread of its own until `stop()`.
    final class ComponentThreadHandle: @unchecked Sendable {
        private let service: ZAPHandler
        private let result: ThreadResult<Void>
        init(_ service: ZAPHandler) {
            self.service = service
            result = ThreadResult("zap") { try service.run() }
        }
        func stop() {
            service.shutdown()
            _ = try? result.value()
        }
    }

    /// Sends "ping" from a CURVE client with `keys` and returns the reply and the User-Id the
    /// server saw, or `nil` when no reply came within half a second.
    func exchange(_ fixture: Fixture, as keys: CurveKeyPair) throws -> (reply: [UInt8], userID: String?)? {
        let context = fixture.context
        let serverKeys = fixture.server
        return try ThreadResult<(reply: [UInt8], userID: String?)?>("exchange") {
            let server = try context.socket(.router)
            defer { server.close() }
            try server.set(.linger, to: 0)
            try server.secure(.curveServer(serverKeys, zapDomain: "test.domain"))
            try server.bind("tcp://127.0.0.1:*")
            let client = try context.socket(.dealer)
            defer { client.close() }
            try client.set(.linger, to: 0)
            try client.secure(.curveClient(keys, serverKey: serverKeys.publicKey))
            try client.connect(try server.option(.lastEndpoint))
            _ = try client.send(Array("ping".utf8))
            try server.set(.receiveTimeout, to: 500)
            let routingID = Message(), body = Message()
            guard try server.receive(into: routingID) else { return nil }
            _ = try server.receive(into: body)
            let userID = body.property("User-Id")
            _ = try server.send(routingID.bytes, options: .more)
            _ = try server.send(Array("pong".utf8))
            try client.set(.receiveTimeout, to: 2000)
            guard let reply = try client.receive() else { return nil }
            return (reply, userID)
        }.value()
    }

    @Test("an allowed key is let in and its messages carry the User-Id the handler chose")
    func allowedKeyGetsIn() throws {
        let fixture = try Fixture()
        let result = try #require(try exchange(fixture, as: fixture.allowed))
        #expect(result.reply == Array("pong".utf8))
        #expect(result.userID == "trusted-client")
        let request = try #require(fixture.requests.all.first)
        #expect(request.domain == "test.domain")
        #expect(request.mechanism == "CURVE")
        #expect(request.curvePublicKey == fixture.allowed.publicKey)
        #expect(request.address == "127.0.0.1")
    }

    @Test("a denied key never reaches the server socket")
    func deniedKeyIsRefused() throws {
        let fixture = try Fixture()
        #expect(try exchange(fixture, as: try CurveKeyPair.generate()) == nil)
        #expect(fixture.requests.all.count >= 1)
    }

    @Test("malformed requests get status 500 and no decision")
    func malformedRequestsAreRefused() throws {
        let handler = try ZAPHandler(context: try Context()) { _ in .allow(userID: "anyone") }
        let reply = handler.answer([Array("0.9".utf8), Array("7".utf8)])
        #expect(reply.count == 6)
        #expect(reply[1] == Array("7".utf8))
        #expect(reply[2] == Array("500".utf8))
    }
}
