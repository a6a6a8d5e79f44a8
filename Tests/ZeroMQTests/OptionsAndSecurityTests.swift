import LyceumTestSupport
import Testing
import ZeroMQ

@Suite("Socket options, CURVE and monitoring")
struct OptionsAndSecurityTests {
    @Test("Options read back what was set")
    func optionsRoundTrip() throws {
        let context = try Context()
        let socket = try context.socket(.dealer)
        try socket.set(.linger, to: 250)
        try socket.set(.sendHighWaterMark, to: 123)
        try socket.set(.receiveHighWaterMark, to: 456)
        try socket.set(.receiveTimeout, to: 789)
        try socket.set(.maxMessageSize, to: 1 << 20)
        try socket.set(.heartbeatInterval, to: 1000)
        try socket.set(.heartbeatTimeout, to: 3000)
        try socket.set(.reconnectInterval, to: 50)
        try socket.set(.reconnectIntervalMax, to: 5000)
        try socket.set(.tcpKeepalive, to: 1)
        try socket.set(.immediate, to: true)
        try socket.set(.routingID, to: [0x00, 0x01, 0x02])
        #expect(try socket.option(.linger) == 250)
        #expect(try socket.option(.sendHighWaterMark) == 123)
        #expect(try socket.option(.receiveHighWaterMark) == 456)
        #expect(try socket.option(.receiveTimeout) == 789)
        #expect(try socket.option(.maxMessageSize) == 1 << 20)
        #expect(try socket.option(.heartbeatInterval) == 1000)
        #expect(try socket.option(.heartbeatTimeout) == 3000)
        #expect(try socket.option(.reconnectInterval) == 50)
        #expect(try socket.option(.reconnectIntervalMax) == 5000)
        #expect(try socket.option(.tcpKeepalive) == 1)
        #expect(try socket.option(.immediate))
        #expect(try socket.option(.routingID) == [0x00, 0x01, 0x02])
    }

    @Test("An invalid option value is a typed error naming the option")
    func invalidOption() throws {
        let socket = try Context().socket(.dealer)
        let error = try #require(throws: ZMQError.self) { try socket.set(.routingID, to: []) }
        #expect(error.code == .invalidArgument)
        #expect(error.operation == "setsockopt ZMQ_ROUTING_ID")
    }

    @Test("Z85 round-trips keys and rejects malformed input")
    func z85() throws {
        // The test vector from RFC 32/Z85.
        let bytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(try Z85.encode(bytes) == "HelloWorld")
        #expect(try Z85.decode("HelloWorld") == bytes)
        #expect(throws: ZMQError.self) { try Z85.encode([1, 2, 3]) }
        #expect(throws: ZMQError.self) { try Z85.decode("Hell") }
    }

    @Test("CURVE: the right server key connects; a wrong one delivers nothing and fails the handshake")
    func curveHandshake() throws {
        #expect(LibZMQ.has(.curve))
        let context = try Context()
        let serverKeys = try CurveKeyPair.generate()
        #expect(serverKeys.publicKey.count == 32 && serverKeys.secretKey.count == 32)
        let server = try context.socket(.pull)
        try server.set(.curveServer, to: true)
        try server.set(.curveSecretKey, to: serverKeys.secretKey)
        try server.set(.receiveTimeout, to: 5000)
        let monitor = try SocketMonitor(server)
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint

        func client(expecting serverKey: [UInt8]) throws -> Socket {
            let keys = try CurveKeyPair.generate()
            let client = try context.socket(.push)
            try client.set(.curveServerKey, to: serverKey)
            try client.set(.curvePublicKey, to: keys.publicKey)
            try client.set(.curveSecretKey, to: keys.secretKey)
            try client.connect(endpoint)
            return client
        }

        let impostor = try client(expecting: try CurveKeyPair.generate().publicKey)
        try impostor.send(Array("from the wrong key".utf8), options: .dontWait)
        let failure = try monitor.wait(for: .handshakeFailed, timeout: .seconds(5))
        #expect(failure != nil)

        let trusted = try client(expecting: serverKeys.publicKey)
        try trusted.send(Array("hello".utf8))
        #expect(try server.receive() == Array("hello".utf8))
        // Only the trusted client's message ever arrives.
        try server.set(.receiveTimeout, to: 200)
        #expect(try server.receive() == nil)
    }

    @Test("The monitor reports connections and disconnections")
    func monitorEvents() throws {
        let context = try Context()
        let router = try context.socket(.router)
        let monitor = try SocketMonitor(router, kinds: [.accepted, .disconnected, .listening])
        try router.bind("tcp://127.0.0.1:*")
        #expect(try monitor.wait(for: .listening, timeout: .seconds(5))?.endpoint == router.lastEndpoint)
        let dealer = try context.socket(.dealer)
        try dealer.connect(try router.lastEndpoint)
        #expect(try monitor.wait(for: .accepted, timeout: .seconds(5)) != nil)
        dealer.close()
        #expect(try monitor.wait(for: .disconnected, timeout: .seconds(5)) != nil)
    }

    @Test("The library reports its version and capabilities")
    func library() {
        #expect(LibZMQ.version.hasPrefix("4."))
        #expect(LibZMQ.has(.ipc))
    }
}
