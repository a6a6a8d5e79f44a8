import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// Lyceum's broker driven by plain DEALER sockets speaking the frames of 7/MDP's tables.
@Suite struct BrokerConformanceTests {
    static let clientAddress: [UInt8] = [0x00, 0x43, 0x00, 0x01, 0xFF]
    static let empty: [UInt8] = []
    static let workerHeader = bytes("MDPW01")
    static let clientHeader = bytes("MDPC01")

    /// A raw worker that has sent READY for `service`.
    static func rawWorker(_ context: Context, _ endpoint: String, service: String = "echo") throws -> Socket {
        let worker = try context.socket(.dealer)
        try worker.connect(endpoint)
        try worker.send(multipart: [empty, workerHeader, [0x01], bytes(service)])
        return worker
    }

    /// A raw worker for `echo`, returned once the broker lists the service, with the MMI client
    /// that asked.
    static func registeredRawWorker(_ context: Context, _ endpoint: String) throws -> (worker: Socket, mmi: Client) {
        let worker = try rawWorker(context, endpoint)
        let mmi = quickClient(endpoint, context: context)
        try #require(try eventually { try mmi.isRegistered("echo") })
        return (worker, mmi)
    }

    static func rawClient(_ context: Context, _ endpoint: String, address: [UInt8] = clientAddress) throws -> Socket {
        let client = try context.socket(.dealer)
        try client.set(.routingID, to: address)
        try client.connect(endpoint)
        return client
    }

    static func isDisconnect(_ frames: [[UInt8]]) -> Bool { frames == [empty, workerHeader, [0x05]] }

    /// The worker sees an address of the broker's making, never the client's routing id: a peer
    /// that registers as a worker must not learn the ROUTER's automatic ids (protocol/majordomo.md).
    @Test func requestAndReplyCarryEveryFrameAndAnOpaqueClientAddress() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let worker = try Self.rawWorker(context, broker.endpoint)
        let client = try Self.rawClient(context, broker.endpoint)
        // The READY has to be in before the request, or the request waits in the queue: both work.
        try client.send(multipart: [Self.empty, Self.clientHeader, bytes("echo"), bytes("part 1"), [0x00, 0x02]])

        let request = try #require(try receive(worker) { $0.count > 3 })
        let address = request[3]
        #expect(address != Self.clientAddress && address.count == 8, "the worker is shown an address, not the routing id")
        #expect(request == [Self.empty, Self.workerHeader, [0x02], address, Self.empty, bytes("part 1"), [0x00, 0x02]])

        try worker.send(multipart: [Self.empty, Self.workerHeader, [0x03], address, Self.empty, bytes("reply"), []])
        let reply = try #require(try receive(client))
        #expect(reply == [Self.empty, Self.clientHeader, bytes("echo"), bytes("reply"), []])
    }

    @Test func clientEnvelopeFramesComeBackWithTheReply() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let worker = try Self.rawWorker(context, broker.endpoint)
        let client = try Self.rawClient(context, broker.endpoint)
        let tag: [UInt8] = [0x00, 0x00, 0x00, 0x07]
        try client.send(multipart: [tag, Self.empty, Self.clientHeader, bytes("echo"), bytes("tagged")])
        let request = try #require(try receive(worker) { $0.count > 3 })
        #expect(request == [Self.empty, Self.workerHeader, [0x02], request[3], Self.empty, bytes("tagged")],
                "the worker sees exactly one client address frame")
        try worker.send(multipart: [Self.empty, Self.workerHeader, [0x03], request[3], Self.empty, bytes("done")])
        #expect(try receive(client) == [tag, Self.empty, Self.clientHeader, bytes("echo"), bytes("done")])
    }

    @Test func shutdownSaysDisconnectToEveryWorker() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        let workers = try (0..<3).map { _ in try Self.rawWorker(context, broker.endpoint) }
        let mmi = quickClient(broker.endpoint, context: context)
        #expect(try eventually { try mmi.isRegistered("echo") })
        pause(milliseconds: 100)  // lets the other READYs arrive
        broker.stop()
        for worker in workers {
            #expect(try receive(worker) { Self.isDisconnect($0) } != nil)
        }
    }

    @Test func bindFailureIsReportedNotHung() throws {
        let context = try Context()
        let broker = try Broker(endpoints: ["tcp://256.0.0.1:1"], context: context)
        let thread = ComponentThread(broker, name: "failing-broker")
        #expect(throws: MajordomoError.self) { try broker.waitUntilBound(timeout: .seconds(3)) }
        #expect(thread.join() != nil)
    }

    @Test func idleWorkersGetHeartbeats() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let worker = try Self.rawWorker(context, broker.endpoint)
        let heartbeat = try receive(worker, timeout: .seconds(1))
        #expect(heartbeat == [Self.empty, Self.workerHeader, [0x04]])
    }

    @Test func leastRecentlyUsedWorkerGetsTheNextRequest() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let (first, _) = try Self.registeredRawWorker(context, broker.endpoint)
        let client = try Self.rawClient(context, broker.endpoint)
        let second = try Self.rawWorker(context, broker.endpoint)
        pause(milliseconds: 100)  // lets the second READY arrive

        func roundTrip(expecting worker: Socket) throws {
            try client.send(multipart: [Self.empty, Self.clientHeader, bytes("echo"), bytes("x")])
            let request = try #require(try receive(worker) { $0.count > 3 })
            try worker.send(multipart: [Self.empty, Self.workerHeader, [0x03], request[3], Self.empty, bytes("y")])
            #expect(try receive(client)?.last == bytes("y"))
        }
        try roundTrip(expecting: first)
        try roundTrip(expecting: second)
        try roundTrip(expecting: first)
    }

    @Test(arguments: [
        ("HEARTBEAT from an unregistered worker", [[UInt8]]([[], bytes("MDPW01"), [0x04]])),
        ("REPLY without a request", [[], bytes("MDPW01"), [0x03], [0x01], [], bytes("x")]),
        ("REQUEST from a worker", [[], bytes("MDPW01"), [0x02], [0x01], [], bytes("x")]),
        ("unknown command byte", [[], bytes("MDPW01"), [0x07]]),
        ("two-byte command", [[], bytes("MDPW01"), [0x01, 0x01], bytes("echo")]),
        ("READY without a service", [[], bytes("MDPW01"), [0x01]]),
        ("READY with an empty service", [[], bytes("MDPW01"), [0x01], []]),
        ("READY for mmi.", [[], bytes("MDPW01"), [0x01], bytes("mmi.service")]),
        ("READY for a 256-byte service name", [[], bytes("MDPW01"), [0x01], [UInt8](repeating: 0x61, count: 256)]),
        ("READY for an unprintable service name", [[], bytes("MDPW01"), [0x01], bytes("ec\nho")]),
        ("HEARTBEAT with an extra frame", [[], bytes("MDPW01"), [0x04], bytes("extra")]),
    ])
    func invalidOrUnexpectedWorkerCommandsGetDisconnect(_ name: String, _ frames: [[UInt8]]) throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let worker = try context.socket(.dealer)
        try worker.connect(broker.endpoint)
        try worker.send(multipart: frames)
        #expect(try receive(worker, timeout: .seconds(2)).map(Self.isDisconnect) == true, "\(name)")
    }

    @Test func requestForAVanishedWorkerWaitsForTheNextOne() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let (vanished, _) = try Self.registeredRawWorker(context, broker.endpoint)
        // Gone without DISCONNECT: the broker finds out when its request cannot be routed, purges
        // the worker, with it the service's last worker, and must still keep the request.
        vanished.close()
        pause(milliseconds: 300)
        let client = try Self.rawClient(context, broker.endpoint)
        try client.send(multipart: [Self.empty, Self.clientHeader, bytes("echo"), bytes("kept")])
        pause(milliseconds: 100)
        let next = try Self.rawWorker(context, broker.endpoint)
        let request = try #require(try receive(next) { $0.count > 3 })
        #expect(request == [Self.empty, Self.workerHeader, [0x02], request[3], Self.empty, bytes("kept")])
    }

    @Test func secondReadyDisconnectsAndUnregistersTheWorker() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let (worker, mmi) = try Self.registeredRawWorker(context, broker.endpoint)
        try worker.send(multipart: [Self.empty, Self.workerHeader, [0x01], bytes("echo")])
        #expect(try receive(worker) { Self.isDisconnect($0) } != nil)
        #expect(try mmi.isRegistered("echo") == false)
    }

    @Test func workerDisconnectUnregistersIt() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let (worker, mmi) = try Self.registeredRawWorker(context, broker.endpoint)
        try worker.send(multipart: [Self.empty, Self.workerHeader, [0x05]])
        #expect(try eventually { try !mmi.isRegistered("echo") })
    }

    @Test func workerSilentWithARequestPastTheLimitIsPurgedAndALateReplyDisconnected() throws {
        let context = try Context()
        let configuration = BrokerConfiguration(heartbeat: fastHeartbeat, maxRequestDuration: .milliseconds(400))
        let broker = try RunningBroker(configuration, context: context)
        defer { broker.stop() }
        let (worker, mmi) = try Self.registeredRawWorker(context, broker.endpoint)
        let client = try Self.rawClient(context, broker.endpoint)
        try client.send(multipart: [Self.empty, Self.clientHeader, bytes("echo"), bytes("stuck")])
        let stuck = try #require(try receive(worker) { $0.count > 3 })
        // Past the heartbeat expiry (300 ms) the worker is kept: it holds a request.
        pause(milliseconds: 320)
        #expect(try mmi.isRegistered("echo"))
        #expect(try eventually { try !mmi.isRegistered("echo") })
        try worker.send(multipart: [Self.empty, Self.workerHeader, [0x03], stuck[3], Self.empty, bytes("late")])
        #expect(try receive(worker) { Self.isDisconnect($0) } != nil)
    }

    @Test func managementInterfaceAnswers200And404And501() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let (worker, _) = try Self.registeredRawWorker(context, broker.endpoint)
        defer { worker.close() }
        let client = try Self.rawClient(context, broker.endpoint)

        for (service, body, answer) in [("mmi.service", "echo", "200"), ("mmi.service", "nobody", "404"), ("mmi.status", "echo", "501")] {
            try client.send(multipart: [Self.empty, Self.clientHeader, bytes(service), bytes(body)])
            #expect(try receive(client) == [Self.empty, Self.clientHeader, bytes(service), bytes(answer)])
        }
    }

    @Test func allExpiredWorkersArePurgedNotOnlyThoseBeforeALiveOne() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let silentFirst = try Self.rawWorker(context, broker.endpoint, service: "a")
        let live = try Self.rawWorker(context, broker.endpoint, service: "b")
        let silentLast = try Self.rawWorker(context, broker.endpoint, service: "c")
        defer { for socket in [silentFirst, silentLast] { socket.close() } }
        let mmi = quickClient(broker.endpoint, context: context)
        #expect(try eventually { try ["a", "b", "c"].allSatisfy { try mmi.isRegistered($0) } })
        // Only the live worker heartbeats, for well over the expiry (300 ms).
        let clock = ContinuousClock()
        let until = clock.now + .milliseconds(900)
        while clock.now < until {
            try live.send(multipart: [Self.empty, Self.workerHeader, [0x04]])
            _ = try receive(live, timeout: .milliseconds(50))
        }
        #expect(try mmi.isRegistered("a") == false)
        #expect(try mmi.isRegistered("b") == true)
        #expect(try mmi.isRegistered("c") == false)
    }
}
