import LyceumTestSupport
import Testing
import ZeroMQ

/// The sockets' wire byte counts against the kernel's under CURVE: the connection guard's
/// budgets compare the two, so any per-frame error adds up over a long-lived connection.
@Suite("CURVE wire sizes")
struct CurveWireSizeTests {
    @Test("with CURVE, bytes counted per frame match the kernel's: only the handshake is left over, however many frames pass")
    func curveFramesAreCountedExactly() throws {
        try ThreadResult<Void>("curve wire sizes") {
            let context = try Context()
            let serverKeys = try CurveKeyPair.generate()
            let server = try context.socket(.router)
            defer { server.close() }
            try server.set(.linger, to: 0)
            try server.secure(.curveServer(serverKeys, zapDomain: "test.wire"))
            try server.bind("tcp://127.0.0.1:*")
            let client = try context.socket(.dealer)
            defer { client.close() }
            try client.set(.linger, to: 0)
            try client.secure(.curveClient(try CurveKeyPair.generate(), serverKey: serverKeys.publicKey))
            try client.connect(try server.option(.lastEndpoint))
            try client.set(.receiveTimeout, to: 5000)
            try server.set(.receiveTimeout, to: 5000)

            // Sizes on both sides of the short-frame limit, with and without the CURVE overhead.
            let sizes = [0, 1, 100, 222, 223, 230, 255, 256, 5000]
            var descriptor: Int32 = -1
            // Routing-id frames are counted by the sockets but never cross the wire.
            var routingIDsReceived: UInt64 = 0
            var routingIDsSent: UInt64 = 0
            /// One request of every size, then its reply; returns, as measured when the request
            /// has arrived (its segments acknowledge every earlier reply, which the client has
            /// read), kernel received − counted received and counted sent − kernel acknowledged
            /// on the server's connection.
            func round() throws -> (input: Int64, output: Int64) {
                _ = try client.send(multipart: sizes.map { [UInt8](repeating: 7, count: $0) })
                var routingID: [UInt8] = []
                for index in 0...sizes.count {
                    let message = Message()
                    #expect(try server.receive(into: message))
                    if index == 0 {
                        routingID = message.bytes
                        routingIDsReceived += server.wireSize(ofFrame: message.count)
                    } else if let source = message.sourceDescriptor {
                        descriptor = source
                    }
                }
                let counters = try #require(TCPConnection(descriptor: descriptor).counters)
                let measured = (input: Int64(counters.received) - Int64(server.wireBytesReceived - routingIDsReceived),
                                output: Int64(server.wireBytesSent - routingIDsSent) - Int64(counters.acknowledged))
                _ = try server.send(routingID, options: .more)
                routingIDsSent += server.wireSize(ofFrame: routingID.count)
                _ = try server.send(multipart: sizes.map { [UInt8](repeating: 9, count: $0) })
                for _ in sizes { _ = try #require(try client.receive()) }
                return measured
            }
            _ = try round()
            // From the second round on, replies have been sent and acknowledged.
            let first = try round()
            for _ in 0..<20 { _ = try round() }
            let last = try round()
            // What is left is the handshake (greeting, HELLO/INITIATE in; greeting, WELCOME/READY out).
            #expect(first.input == last.input, "input drifted from \(first.input) to \(last.input) bytes")
            #expect(last.input > 0 && last.input < 1024)
            #expect(-last.output > 0 && -last.output < 1024, "output left over \(last.output)")
            #expect(first.output == last.output, "output drifted from \(first.output) to \(last.output) bytes")
        }.value()
    }
}
