import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// One broker, three dialects (protocol/majordomo.md, "Three dialects"), on raw sockets: each
/// client answered in its own framing whatever its worker speaks, an 18/MDP worker's PARTIALs
/// passed to 18/MDP clients and held for a 7/MDP client's one reply, and a worker that changes
/// dialect or leaves mid-reply handled without serving a request twice.
@Suite struct BrokerDialectTests {
    static let service = "dialects"
    /// Raw workers send no heartbeats: the broker must not expire them during a test.
    static let slowHeartbeat = Heartbeat(interval: .seconds(5), liveness: 3)

    /// A raw majortomo-framed worker registered for ``service``.
    static func majortomoWorker(_ broker: RunningBroker, context: Context) throws -> Socket {
        let socket = try context.socket(.dealer)
        try socket.connect(broker.endpoint)
        try socket.send(multipart: WorkerCommand.ready(service: bytes(service)).frames(in: .majortomo))
        #expect(eventually { broker.broker.snapshot.services.first { $0.name == service }?.workers == 1 })
        return socket
    }

    /// The next REQUEST a majortomo-framed worker gets, heartbeats skipped: its client address and body.
    static func nextRequest(_ worker: Socket) throws -> (address: [UInt8], body: [[UInt8]])? {
        guard let frames = try receive(worker, timeout: .seconds(10), until: { $0.count >= 4 && $0[2] == [0x02] }) else { return nil }
        let command = try WorkerCommand(frames: frames[...], dialect: .majortomo)
        guard case .request(let address, let body) = command else { return nil }
        return (address, body)
    }

    static func client(_ broker: RunningBroker, context: Context) throws -> Socket {
        let socket = try context.socket(.dealer)
        try socket.connect(broker.endpoint)
        return socket
    }

    @Test func eachClientGetsItsOwnFramingAndEighteenClientsTheParts() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.slowHeartbeat), context: context)
        defer { broker.stop() }
        let worker = try Self.majortomoWorker(broker, context: context)
        let request = ClientMessage(service: bytes(Self.service), body: [bytes("list")])
        for dialect in MDPDialect.allCases {
            let client = try Self.client(broker, context: context)
            defer { client.close() }
            try client.send(multipart: request.requestFrames(in: dialect))
            let taken = try #require(try Self.nextRequest(worker), "\(dialect)")
            #expect(taken.body == [bytes("list")])
            try worker.send(multipart: WorkerCommand.partial(client: taken.address, body: [bytes("page 1")]).frames(in: .majortomo))
            try worker.send(multipart: WorkerCommand.partial(client: taken.address, body: [bytes("page 2")]).frames(in: .majortomo))
            try worker.send(multipart: WorkerCommand.reply(client: taken.address, body: [bytes("page 3")]).frames(in: .majortomo))
            let parts = ["page 1", "page 2", "page 3"].map { ClientMessage(service: bytes(Self.service), body: [bytes($0)]) }
            if dialect == .mdp7 {
                // A 7/MDP client takes one reply: the parts' frames, in order.
                let reply = try #require(try receive(client, timeout: .seconds(10)))
                #expect(reply == ClientMessage(service: bytes(Self.service), body: parts.flatMap(\.body)).frames)
            } else {
                for (index, part) in parts.enumerated() {
                    let reply = try #require(try receive(client, timeout: .seconds(10)), "\(dialect) part \(index)")
                    #expect(reply == part.replyFrames(in: dialect, final: index == parts.count - 1))
                }
            }
        }
    }

    @Test func aSevenWorkerServesAnRFC18ClientAndAWorkerChangingDialectIsRefused() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.slowHeartbeat), context: context)
        defer { broker.stop() }
        let worker = try context.socket(.dealer)
        try worker.connect(broker.endpoint)
        try worker.send(multipart: WorkerCommand.ready(service: bytes(Self.service)).frames)
        #expect(eventually { broker.broker.snapshot.services.first { $0.name == Self.service }?.workers == 1 })
        let client = try Self.client(broker, context: context)
        try client.send(multipart: ClientMessage(service: bytes(Self.service), body: [bytes("hello")]).requestFrames(in: .rfc18))
        let taken = try #require(try receive(worker, timeout: .seconds(10), until: { $0.count >= 3 && $0[2] == [0x02] }))
        try worker.send(multipart: WorkerCommand.reply(client: taken[3], body: [bytes("hi")]).frames)
        let reply = try #require(try receive(client, timeout: .seconds(10)))
        #expect(reply == [bytes("MDPC02"), [0x03], bytes(Self.service), bytes("hi")])

        // The same worker heartbeating in 18/MDP is told DISCONNECT in the 7/MDP it registered in.
        try worker.send(multipart: WorkerCommand.heartbeat.frames(in: .majortomo))
        let refusal = try #require(try receive(worker, timeout: .seconds(10), until: { $0.count == 3 && $0[1] == bytes("MDPW01") }))
        #expect(refusal == WorkerCommand.disconnect.frames)
        #expect(eventually { (broker.broker.snapshot.services.first { $0.name == Self.service }?.workers ?? 0) == 0 })
    }

    @Test func aRequestCrossingAMajortomoWorkersDisconnectGoesToAnotherWorkerOfAnyDialect() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.slowHeartbeat), context: context)
        defer { broker.stop() }
        let leaving = try Self.majortomoWorker(broker, context: context)
        let client = try Self.client(broker, context: context)
        try client.send(multipart: ClientMessage(service: bytes(Self.service), body: [bytes("write")]).requestFrames(in: .rfc18))
        _ = try #require(try Self.nextRequest(leaving))
        // Draining: it says DISCONNECT without handling the request in hand.
        try leaving.send(multipart: WorkerCommand.disconnect.frames(in: .majortomo))
        #expect(eventually { broker.broker.snapshot.services.first { $0.name == Self.service }?.queuedRequests == 1 })

        let staying = try context.socket(.dealer)
        try staying.connect(broker.endpoint)
        try staying.send(multipart: WorkerCommand.ready(service: bytes(Self.service)).frames)
        let requeued = try #require(try receive(staying, timeout: .seconds(10), until: { $0.count >= 3 && $0[2] == [0x02] }))
        #expect(Array(requeued[5...]) == [bytes("write")])
        try staying.send(multipart: WorkerCommand.reply(client: requeued[3], body: [bytes("written")]).frames)
        #expect(try receive(client, timeout: .seconds(10)) == [bytes("MDPC02"), [0x03], bytes(Self.service), bytes("written")])
    }

    @Test func aWorkerLeavingMidReplyIsNotAskedAgainAndItsClientIsAnswered() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.slowHeartbeat), context: context)
        defer { broker.stop() }
        let worker = try Self.majortomoWorker(broker, context: context)
        let client = try Self.client(broker, context: context)
        try client.send(multipart: ClientMessage(service: bytes(Self.service), body: [bytes("write")]).requestFrames(in: .majortomo))
        let taken = try #require(try Self.nextRequest(worker))
        try worker.send(multipart: WorkerCommand.partial(client: taken.address, body: [bytes("half")]).frames(in: .majortomo))
        try worker.send(multipart: WorkerCommand.disconnect.frames(in: .majortomo))
        let partial = try #require(try receive(client, timeout: .seconds(10)))
        #expect(partial == [[], bytes("MDPC02"), [0x03], bytes("half")])
        let final = try #require(try receive(client, timeout: .seconds(10)))
        #expect(Array(final.prefix(3)) == [[], bytes("MDPC02"), [0x04]])
        #expect(BrokerRejection(body: Array(final.dropFirst(3)))?.code == .serviceUnknown)
        #expect(broker.broker.snapshot.services.first { $0.name == Self.service }?.queuedRequests ?? 0 == 0, "not queued again")
    }
}
