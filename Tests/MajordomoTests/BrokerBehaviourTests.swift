import LyceumLogging
import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// Lyceum's broker, worker sessions and clients together: bounds, errors, malformed traffic.
@Suite struct BrokerBehaviourTests {
    static let empty: [UInt8] = []

    @Test func echoThroughTheBrokerAndManagementQueries() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let workers = try RunningWorkers(2, endpoint: broker.endpoint, context: context)
        defer { workers.stop() }
        let client = quickClient(broker.endpoint, context: context)
        #expect(try eventually { try client.isRegistered("echo") })
        #expect(try client.isRegistered("nobody") == false)
        #expect(try client.call("echo", body: [bytes("hello"), [0x00, 0x01]]) == [bytes("hello"), [0x00, 0x01]])
        #expect(try client.call("echo", body: []) == [[]], "an empty body travels as one empty frame")
        #expect(try client.call("mmi.unknown", body: [bytes("x")]) == [bytes("501")])
    }

    @Test func oneBrokerServesSeveralEndpoints() throws {
        let context = try Context()
        let broker = try Broker(endpoints: ["tcp://127.0.0.1:*", "inproc://several-endpoints"],
                                configuration: BrokerConfiguration(heartbeat: fastHeartbeat), context: context)
        let thread = ComponentThread(broker, name: "two-endpoint-broker")
        defer { thread.stop() }
        let bound = try broker.waitUntilBound()
        #expect(bound.count == 2 && bound[1] == "inproc://several-endpoints")
        let workers = try RunningWorkers(endpoint: bound[1], context: context)
        defer { workers.stop() }
        let client = quickClient(bound[0], context: context)
        #expect(try eventually { try client.isRegistered("echo") })
        #expect(try client.call("echo", body: [bytes("across")]) == [bytes("across")])
    }

    @Test func fullQueueAnswersWithATypedErrorNotSilence() throws {
        let context = try Context()
        let configuration = BrokerConfiguration(heartbeat: fastHeartbeat, unknownServiceTimeout: .seconds(10), maxQueuedRequestsPerService: 2)
        let broker = try RunningBroker(configuration, context: context)
        defer { broker.stop() }
        let waiting = AsyncClient(endpoint: broker.endpoint, capacity: 2, context: context)
        _ = try waiting.send("busy", body: [bytes("1")])
        _ = try waiting.send("busy", body: [bytes("2")])
        pause(milliseconds: 100)
        let client = quickClient(broker.endpoint, context: context)
        #expect {
            try client.call("busy", body: [bytes("3")])
        } throws: { ($0 as? MajordomoError)?.code == .queueFull }
    }

    @Test func globalBoundAnswersOverloaded() throws {
        let context = try Context()
        let configuration = BrokerConfiguration(heartbeat: fastHeartbeat, unknownServiceTimeout: .seconds(10), maxQueuedRequests: 1)
        let broker = try RunningBroker(configuration, context: context)
        defer { broker.stop() }
        let waiting = AsyncClient(endpoint: broker.endpoint, capacity: 1, context: context)
        _ = try waiting.send("first", body: [])
        pause(milliseconds: 100)
        #expect {
            try quickClient(broker.endpoint, context: context).call("second", body: [])
        } throws: { ($0 as? MajordomoError)?.code == .brokerOverloaded }
    }

    @Test func serviceWithoutWorkersIsUnknown() throws {
        let context = try Context()
        let configuration = BrokerConfiguration(heartbeat: fastHeartbeat, unknownServiceTimeout: .milliseconds(200))
        let broker = try RunningBroker(configuration, context: context)
        defer { broker.stop() }
        let client = quickClient(broker.endpoint, context: context)
        #expect {
            try client.call("nobody", body: [bytes("x")])
        } throws: { error in
            let error = error as? MajordomoError
            return error?.code == .serviceUnknown && error?.service == "nobody"
        }
    }

    /// The error reply's code on the wire is snake_case, as every other Lyceum error code is.
    @Test func rejectionOnTheWireSpellsItsCodeInSnakeCase() throws {
        let context = try Context()
        let configuration = BrokerConfiguration(heartbeat: fastHeartbeat, unknownServiceTimeout: .milliseconds(200))
        let broker = try RunningBroker(configuration, context: context)
        defer { broker.stop() }
        let raw = try context.socket(.dealer)
        try raw.connect(broker.endpoint)
        try raw.send(multipart: [Self.empty, bytes("MDPC01"), bytes("nobody"), bytes("x")])
        let reply = try #require(try receive(raw, timeout: .seconds(10)))
        #expect(Array(reply.prefix(3)) == [Self.empty, bytes("MDPC01"), bytes("nobody")])
        #expect(reply.count == 4)
        let body = try #require(reply.last)
        #expect(body.starts(with: [0x00] + bytes("MDP-ERROR service_unknown ")), "\(String(decoding: body.dropFirst(), as: UTF8.self))")
    }

    @Test func requestWaitsForAWorkerThatComesLate() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let client = AsyncClient(endpoint: broker.endpoint, context: context)
        let id = try client.send("late", body: [bytes("queued")])
        pause(milliseconds: 300)
        let workers = try RunningWorkers(endpoint: broker.endpoint, service: "late", context: context)
        defer { workers.stop() }
        let completion = try #require(try client.receive(timeout: .seconds(3)))
        #expect(completion.id == id)
        #expect(try completion.result.get() == [bytes("queued")])
    }

    @Test(arguments: [
        ("wrong header", [[UInt8]]([[], bytes("MDPC02"), bytes("echo"), bytes("x")])),
        ("no leading empty frame", [bytes("MDPC01"), bytes("echo"), bytes("x")]),
        ("missing service", [[], bytes("MDPC01")]),
        ("missing body", [[], bytes("MDPC01"), bytes("echo")]),
        ("empty service name", [[], bytes("MDPC01"), [], bytes("x")]),
        ("one frame", [[]]),
        ("too many frames", [[], bytes("MDPC01"), bytes("echo")] + Array(repeating: [0x01], count: 100)),
    ])
    func malformedClientTrafficIsDroppedAndTheBrokerKeepsServing(_ name: String, _ frames: [[UInt8]]) throws {
        try sendRaw(name, frames) { raw, _ throws in
            #expect(try receive(raw, timeout: .milliseconds(300)) == nil, "\(name) gets no answer")
        }
    }

    /// Sends `frames` from a DEALER of its own to a broker with echo workers, runs `check` with
    /// that socket and a client of the broker, then checks that the broker still serves.
    private func sendRaw(_ name: String, _ frames: [[UInt8]], _ check: (Socket, Client) throws -> Void) throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let workers = try RunningWorkers(endpoint: broker.endpoint, context: context)
        defer { workers.stop() }
        let raw = try context.socket(.dealer)
        try raw.connect(broker.endpoint)
        try raw.send(multipart: frames)
        let client = quickClient(broker.endpoint, context: context)
        try check(raw, client)
        #expect(try client.call("echo", body: [bytes("still")]) == [bytes("still")], "\(name)")
    }

    /// A name no 7/MDP service can have gets a `bad_request` rejection of bounded size, whose
    /// service frame is an excerpt of the name (a 1 MiB name once got a 1 MiB reply); the
    /// broker keeps serving, and Lyceum's own client refuses to send such a name at all.
    @Test(arguments: [
        ("1 MiB", [UInt8](repeating: 0x61, count: 1 << 20), "is 1048576 bytes long, more than the 255"),
        ("256 bytes", [UInt8](repeating: 0x61, count: 256), "is 256 bytes long"),
        ("a control byte", bytes("echo") + [0x07], "not printable ASCII (no space) at offset 4: echo\\x07"),
        ("a space", bytes("ec ho"), "at offset 2"),
        ("not ASCII", bytes("écho"), "at offset 0"),
    ])
    func serviceNamesNoServiceCanHaveGetABoundedBadRequest(_ name: String, _ service: [UInt8], _ expected: String) throws {
        try sendRaw(name, [[], bytes("MDPC01"), service, bytes("x")]) { raw, client throws in
            let reply = try #require(try receive(raw), "\(name): no reply")
            #expect(reply.count == 4 && reply[1] == bytes("MDPC01"), "\(name): \(reply.count) frames")
            #expect(reply.reduce(0) { $0 + $1.count } < 1024, "\(name): a \(reply.reduce(0) { $0 + $1.count })-byte reply")
            #expect(reply[2] == bytes(PeerText.excerpt(service)), "\(name)")
            let rejection = try #require(BrokerRejection(body: [reply[3]]), "\(name)")
            #expect(rejection.code == .badRequest && rejection.text.contains(expected), "\(name): \(rejection.text)")
            #expect {
                try client.call(String(decoding: service, as: UTF8.self), body: [bytes("x")])
            } throws: { ($0 as? MajordomoError)?.code == .invalidArgument }
        }
    }

    @Test func oversizedFramesDisconnectTheSenderOnly() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: fastHeartbeat, maxFrameSize: 1024), context: context)
        defer { broker.stop() }
        let workers = try RunningWorkers(endpoint: broker.endpoint, context: context)
        defer { workers.stop() }
        let client = quickClient(broker.endpoint, context: context, timeout: .milliseconds(300), attempts: 1)
        #expect {
            try client.call("echo", body: [[UInt8](repeating: 7, count: 4096)])
        } throws: { ($0 as? MajordomoError)?.code == .timedOut }
        let fine = quickClient(broker.endpoint, context: context)
        #expect(try fine.call("echo", body: [[UInt8](repeating: 7, count: 1000)]).first?.count == 1000)
    }

    @Test func manyRequestsInFlightOverSeveralSessionsAllMatch() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let workers = try RunningWorkers(4, endpoint: broker.endpoint, context: context) { body in
            pause(milliseconds: Int.random(in: 0...3))
            return body
        }
        defer { workers.stop() }
        let client = AsyncClient(endpoint: broker.endpoint, capacity: 50, configuration: ClientConfiguration(timeout: .seconds(5)), context: context)
        var expected: [AsyncClient.RequestID: [[UInt8]]] = [:]
        var sent = 0
        var matched = 0
        while matched < 500 {
            while sent < 500, client.inFlight < client.capacity {
                let body = [bytes("request \(sent)"), withUnsafeBytes(of: sent) { Array($0) }]
                expected[try client.send("echo", body: body)] = body
                sent += 1
            }
            let completion = try #require(try client.receive(timeout: .seconds(5)))
            #expect(try completion.result.get() == expected.removeValue(forKey: completion.id))
            matched += 1
        }
        #expect(expected.isEmpty)
    }

    @Test func workersRegisterAgainAfterTheBrokerRestarts() throws {
        let context = try Context()
        var broker = try RunningBroker(context: context)
        let endpoint = broker.endpoint
        let workers = try RunningWorkers(2, endpoint: endpoint, context: context)
        defer { workers.stop() }
        let client = quickClient(endpoint, context: context)
        #expect(try eventually { try client.isRegistered("echo") })
        broker.stop()
        pause(milliseconds: 200)
        broker = try RunningBroker(context: context, endpoint: endpoint)
        defer { broker.stop() }
        #expect(try eventually { try client.isRegistered("echo") })
        #expect(try client.call("echo", body: [bytes("again")]) == [bytes("again")])
    }

    @Test func asyncClientRidesOutABrokerRestart() throws {
        let context = try Context()
        var broker = try RunningBroker(context: context)
        let endpoint = broker.endpoint
        let workers = try RunningWorkers(3, endpoint: endpoint, context: context)
        defer { workers.stop() }
        let client = AsyncClient(endpoint: endpoint, capacity: 10,
                                 configuration: ClientConfiguration(timeout: .milliseconds(700), attempts: 5), context: context)
        #expect(try eventually { try quickClient(endpoint, context: context).isRegistered("echo") })
        broker.stop()
        // Sent while no broker listens: they wait for the connection, then for workers.
        var expected: [AsyncClient.RequestID: [[UInt8]]] = [:]
        for index in 0..<10 {
            let body = [bytes("during restart \(index)")]
            expected[try client.send("echo", body: body)] = body
        }
        pause(milliseconds: 200)
        broker = try RunningBroker(context: context, endpoint: endpoint)
        defer { broker.stop() }
        while !expected.isEmpty {
            let completion = try #require(try client.receive(timeout: .seconds(5)))
            #expect(try completion.result.get() == expected.removeValue(forKey: completion.id))
        }
    }

    @Test func gracefulWorkerShutdownUnregistersIt() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let workers = try RunningWorkers(endpoint: broker.endpoint, context: context)
        let client = quickClient(broker.endpoint, context: context)
        #expect(try eventually { try client.isRegistered("echo") })
        workers.stop()
        #expect(try eventually(timeout: .milliseconds(500)) { try !client.isRegistered("echo") })
    }
}
