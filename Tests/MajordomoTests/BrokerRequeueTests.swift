import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// A request that crosses its worker's DISCONNECT on the wire goes back to its queue; one whose
/// worker vanishes without a word is not sent again (it may have been applied).
@Suite struct BrokerRequeueTests {
    static let service = "moving"
    /// Raw workers send no heartbeats: the broker must not expire them during a test.
    static let slowHeartbeat = Heartbeat(interval: .seconds(5), liveness: 3)

    /// A worker on a raw DEALER, registered for ``service`` once the broker counts `workers`
    /// workers for it.
    static func registerRawWorker(_ broker: RunningBroker, context: Context, workers: Int) throws -> Socket {
        let socket = try context.socket(.dealer)
        try socket.connect(broker.endpoint)
        try socket.send(multipart: [[], bytes("MDPW01"), [0x01], bytes(service)])
        #expect(eventually { workerCount(broker) == workers })
        return socket
    }

    /// A client that sends each request once and waits long: a retry would hide a lost request.
    static func patientClient(_ broker: RunningBroker, context: Context) -> AsyncClient {
        AsyncClient(endpoint: broker.endpoint, configuration: ClientConfiguration(timeout: .seconds(60), attempts: 1), context: context)
    }

    static func workerCount(_ broker: RunningBroker) -> Int {
        broker.broker.snapshot.services.first { $0.name == service }?.workers ?? 0
    }

    /// The next REQUEST the worker gets, heartbeats skipped: its client address and body.
    static func nextRequest(_ worker: Socket) throws -> (address: [UInt8], body: [[UInt8]])? {
        guard let frames = try receive(worker, timeout: .seconds(10), until: { $0.count >= 3 && $0[2] == [0x02] }) else { return nil }
        return (frames[3], Array(frames[5...]))
    }

    static func reply(from worker: Socket, to address: [UInt8], _ body: [UInt8]) throws {
        try worker.send(multipart: [[], bytes("MDPW01"), [0x03], address, [], body])
    }

    static func sayDisconnect(_ worker: Socket) throws {
        try worker.send(multipart: [[], bytes("MDPW01"), [0x05]])
    }

    /// After serving `worker`'s requests so far, the next one it gets is a fresh probe: the broker
    /// holds nothing more for the service (a request sent again would come first).
    static func expectNothingMoreQueued(for worker: Socket, _ broker: RunningBroker, context: Context) throws {
        let prober = AsyncClient(endpoint: broker.endpoint, context: context)
        let probe = try prober.send(service, body: [bytes("probe")])
        let next = try #require(try nextRequest(worker))
        #expect(next.body == [bytes("probe")])
        try reply(from: worker, to: next.address, bytes("probed"))
        let answer = try #require(try prober.receive(timeout: .seconds(10)))
        #expect(answer.id == probe)
    }

    @Test func requestOfADisconnectingWorkerGoesToAnotherExactlyOnce() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.slowHeartbeat), context: context)
        defer { broker.stop() }
        // The first to register is the first to wait, so the request goes to it.
        let leaving = try Self.registerRawWorker(broker, context: context, workers: 1)
        let staying = try Self.registerRawWorker(broker, context: context, workers: 2)
        let client = Self.patientClient(broker, context: context)
        let id = try client.send(Self.service, body: [bytes("read"), Array(repeating: 0x2A, count: 100)])
        let crossed = try #require(try Self.nextRequest(leaving))
        #expect(crossed.body == [bytes("read"), Array(repeating: 0x2A, count: 100)])
        try Self.sayDisconnect(leaving)

        let requeued = try #require(try Self.nextRequest(staying), "the request reaches the other worker")
        #expect(requeued.body == crossed.body, "with its body intact, small frame and large")
        try Self.reply(from: staying, to: requeued.address, bytes("served"))
        let completion = try #require(try client.receive(timeout: .seconds(10)))
        #expect(completion.id == id)
        #expect(try completion.result.get() == [bytes("served")])
        try Self.expectNothingMoreQueued(for: staying, broker, context: context)
    }

    @Test func requestOfADisconnectingWorkerWaitsForTheNextToRegister() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.slowHeartbeat, unknownServiceTimeout: .seconds(30)), context: context)
        defer { broker.stop() }
        let leaving = try Self.registerRawWorker(broker, context: context, workers: 1)
        let client = Self.patientClient(broker, context: context)
        let id = try client.send(Self.service, body: [bytes("write")])
        let crossed = try #require(try Self.nextRequest(leaving))
        try Self.sayDisconnect(leaving)
        #expect(eventually { Self.workerCount(broker) == 0 })
        #expect(broker.broker.snapshot.services.first { $0.name == Self.service }?.queuedRequests == 1, "queued while no worker serves")

        let late = try Self.registerRawWorker(broker, context: context, workers: 1)
        let requeued = try #require(try Self.nextRequest(late))
        #expect(requeued.body == crossed.body)
        try Self.reply(from: late, to: requeued.address, bytes("written"))
        let completion = try #require(try client.receive(timeout: .seconds(10)))
        #expect(completion.id == id)
        #expect(try completion.result.get() == [bytes("written")])
    }

    @Test func requestOfADisconnectingWorkerWithNoSuccessorGetsServiceUnknown() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.slowHeartbeat, unknownServiceTimeout: .milliseconds(300)), context: context)
        defer { broker.stop() }
        let leaving = try Self.registerRawWorker(broker, context: context, workers: 1)
        let client = Self.patientClient(broker, context: context)
        let id = try client.send(Self.service, body: [bytes("write")])
        _ = try #require(try Self.nextRequest(leaving))
        try Self.sayDisconnect(leaving)
        let completion = try #require(try client.receive(timeout: .seconds(10)), "an answer, not silence")
        #expect(completion.id == id)
        #expect {
            try completion.result.get()
        } throws: { ($0 as? MajordomoError)?.code == .serviceUnknown }
    }

    @Test func requestOfAWorkerGoneWithoutDisconnectIsNotSentAgain() throws {
        let context = try Context()
        // Expiry (1 s) soon enough for the test, late enough for the next worker's probe.
        let configuration = BrokerConfiguration(heartbeat: Heartbeat(interval: .seconds(1), liveness: 1), maxRequestDuration: .milliseconds(300))
        let broker = try RunningBroker(configuration, context: context)
        defer { broker.stop() }
        let crashing = try Self.registerRawWorker(broker, context: context, workers: 1)
        let client = Self.patientClient(broker, context: context)
        _ = try client.send(Self.service, body: [bytes("applied?")])
        _ = try #require(try Self.nextRequest(crashing))
        try crashing.set(.linger, to: 0)
        crashing.close()
        #expect(eventually { Self.workerCount(broker) == 0 }, "purged once silent")
        let next = try Self.registerRawWorker(broker, context: context, workers: 1)
        try Self.expectNothingMoreQueued(for: next, broker, context: context)
    }

    /// A pool session that leaves without the reply its handler never sent says no DISCONNECT:
    /// the handler may have applied the request, so no other worker may get it.
    @Test func requestAbandonedAtAPoolsDrainTimeoutIsNotSentAgain() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.slowHeartbeat), context: context)
        defer { broker.stop() }
        let held = HeldRequests()
        let configuration = WorkerConfiguration(heartbeat: Self.slowHeartbeat, drainTimeout: .milliseconds(200))
        let pool = try WorkerPool(endpoint: broker.endpoint, service: Self.service, sessions: 1, configuration: configuration,
                                  context: context, handler: held.handler)
        let thread = ComponentThread(pool, name: "stuck-pool")
        #expect(eventually { Self.workerCount(broker) == 1 })
        let other = try Self.registerRawWorker(broker, context: context, workers: 2)
        let client = Self.patientClient(broker, context: context)
        _ = try client.send(Self.service, body: [bytes("applied, never answered")])
        #expect(eventually { held.count == 1 }, "the pool's session, first to wait, has it")
        pool.shutdown()
        thread.join()
        try Self.expectNothingMoreQueued(for: other, broker, context: context)
    }
}
