import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// Lyceum's worker session driven by a plain ROUTER playing the broker, frame by frame.
@Suite struct WorkerConformanceTests {
    static let empty: [UInt8] = []
    static let header = bytes("MDPW01")
    static let clientAddress: [UInt8] = [0x00, 0xFE, 0x00, 0x2A]

    /// A raw broker socket bound to a free port.
    static func rawBroker(_ context: Context) throws -> (Socket, String) {
        let router = try context.socket(.router)
        try router.bind("tcp://127.0.0.1:*")
        return (router, try router.lastEndpoint)
    }

    static func isReady(_ frames: [[UInt8]]) -> Bool { frames.count == 5 && frames[3] == [0x01] }

    static func expectReady(_ router: Socket) throws -> [UInt8] {
        let ready = try #require(try receive(router) { isReady($0) })
        #expect(Array(ready.dropFirst()) == [empty, header, [0x01], bytes("echo")])
        return ready[0]
    }

    @Test func readyThenReplyToExactlyTheGivenBinaryClientAddress() throws {
        let context = try Context()
        let (router, endpoint) = try Self.rawBroker(context)
        let workers = try RunningWorkers(endpoint: endpoint, context: context) { [bytes("echo:")] + $0 }
        defer { workers.stop() }
        let worker = try Self.expectReady(router)

        try router.send(multipart: [worker, Self.empty, Self.header, [0x02], Self.clientAddress, Self.empty, bytes("a"), [0x00]])
        let reply = try #require(try receive(router) { $0.count > 4 })
        #expect(reply == [worker, Self.empty, Self.header, [0x03], Self.clientAddress, Self.empty, bytes("echo:"), bytes("a"), [0x00]])
    }

    @Test func idleWorkerHeartbeats() throws {
        let context = try Context()
        let (router, endpoint) = try Self.rawBroker(context)
        let workers = try RunningWorkers(endpoint: endpoint, context: context)
        defer { workers.stop() }
        let worker = try Self.expectReady(router)
        let heartbeat = try receive(router, timeout: .seconds(1))
        #expect(heartbeat == [worker, Self.empty, Self.header, [0x04]])
    }

    @Test func disconnectMakesItStartOverOnANewSocket() throws {
        let context = try Context()
        let (router, endpoint) = try Self.rawBroker(context)
        let workers = try RunningWorkers(endpoint: endpoint, context: context)
        defer { workers.stop() }
        let first = try Self.expectReady(router)
        try router.send(multipart: [first, Self.empty, Self.header, [0x05]])
        let second = try Self.expectReady(router)
        #expect(second != first, "a new socket has a new routing id")
    }

    @Test func silentBrokerMakesItStartOverWithBackOff() throws {
        let context = try Context()
        let (router, endpoint) = try Self.rawBroker(context)
        let workers = try RunningWorkers(endpoint: endpoint, context: context)
        defer { workers.stop() }
        let clock = ContinuousClock()
        let first = try Self.expectReady(router)
        let start = clock.now
        // Never answering: liveness 3 × 100 ms, then a 50 ms back-off, then READY on a new socket.
        let second = try Self.expectReady(router)
        let third = try Self.expectReady(router)
        #expect(Set([first, second, third]).count == 3)
        let elapsed = clock.now - start
        // Two expiries (600 ms) plus back-offs of 50 and 100 ms.
        #expect(elapsed >= .milliseconds(700))
    }

    @Test(arguments: [
        ("wrong header", [[UInt8]]([[], bytes("MDPW02"), [0x02], [0x01], [], bytes("x")])),
        ("client header", [[], bytes("MDPC01"), [0x02], [0x01], [], bytes("x")]),
        ("unknown command", [[], bytes("MDPW01"), [0x09]]),
        ("missing delimiter", [[], bytes("MDPW01"), [0x02], [0x01], bytes("x")]),
        ("missing frames", [[], bytes("MDPW01"), [0x02], [0x01]]),
        ("no leading empty frame", [bytes("MDPW01"), [0x02], [0x01], [], bytes("x")]),
        ("heartbeat with extra frames", [[], bytes("MDPW01"), [0x04], bytes("x")]),
        ("READY from the broker", [[], bytes("MDPW01"), [0x01], bytes("echo")]),
    ])
    func ignoresWhatIsNotAValidRequest(_ name: String, _ frames: [[UInt8]]) throws {
        let context = try Context()
        let (router, endpoint) = try Self.rawBroker(context)
        let served = Atomic<Int>(0)
        let workers = try RunningWorkers(endpoint: endpoint, context: context) { body in
            served.add(1, ordering: .relaxed)
            return body
        }
        defer { workers.stop() }
        let worker = try Self.expectReady(router)
        try router.send(multipart: [worker] + frames)
        try router.send(multipart: [worker, Self.empty, Self.header, [0x02], Self.clientAddress, Self.empty, bytes("valid")])
        let reply = try #require(try receive(router) { $0.count > 4 }, "\(name)")
        #expect(reply.last == bytes("valid"))
        #expect(served.load(ordering: .relaxed) == 1, "\(name)")
    }

    @Test func slowRequestDoesNotExpireTheBroker() throws {
        let context = try Context()
        let (router, endpoint) = try Self.rawBroker(context)
        // The request takes three times the broker expiry (300 ms).
        let workers = try RunningWorkers(endpoint: endpoint, context: context) { body in
            pause(milliseconds: 900)
            return body
        }
        defer { workers.stop() }
        let worker = try Self.expectReady(router)
        try router.send(multipart: [worker, Self.empty, Self.header, [0x02], Self.clientAddress, Self.empty, bytes("slow")])
        let reply = try #require(try receive(router) { $0.count > 4 })
        #expect(reply.last == bytes("slow"))
        // Heartbeats from the broker keep it; no new READY within another expiry.
        let clock = ContinuousClock()
        let until = clock.now + .milliseconds(400)
        var readyAgain = false
        while clock.now < until {
            try router.send(multipart: [worker, Self.empty, Self.header, [0x04]])
            if let frames = try receive(router, timeout: .milliseconds(50)), Self.isReady(frames) { readyAgain = true }
        }
        #expect(!readyAgain)
    }

    @Test func shutdownWhileNoBrokerAnswersReturnsPromptly() throws {
        let context = try Context()
        // A back-off of an hour, far past the hang limit: a stop that waited for it would show.
        let slowBackOff = WorkerConfiguration(heartbeat: fastHeartbeat, reconnectInitialDelay: .seconds(3600))
        let workers = try RunningWorkers(3, endpoint: "tcp://127.0.0.1:1", configuration: slowBackOff, context: context)
        pause(milliseconds: 500)  // past the first expiry: now in the back-off
        let clock = ContinuousClock()
        let start = clock.now
        workers.stop()
        let took = clock.now - start
        print("workers stopped in \(took) during an hour-long back-off")
        #expect(took < .hangLimit)
    }

    @Test func shutdownFinishesTheRequestInHandRepliesAndSaysDisconnect() throws {
        let context = try Context()
        let (router, endpoint) = try Self.rawBroker(context)
        let started = Atomic<Bool>(false)
        let workers = try RunningWorkers(endpoint: endpoint, context: context) { body in
            started.store(true, ordering: .releasing)
            pause(milliseconds: 300)
            return body
        }
        let worker = try Self.expectReady(router)
        try router.send(multipart: [worker, Self.empty, Self.header, [0x02], Self.clientAddress, Self.empty, bytes("last")])
        #expect(eventually { started.load(ordering: .acquiring) })
        workers.stop()
        let reply = try #require(try receive(router) { $0.count > 4 })
        #expect(reply.last == bytes("last"))
        let disconnect = try receive(router) { $0.count == 4 && $0[3] == [0x05] }
        #expect(disconnect == [worker, Self.empty, Self.header, [0x05]])
    }
}
