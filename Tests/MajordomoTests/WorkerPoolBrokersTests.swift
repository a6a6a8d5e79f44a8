import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// One pool serving several services at several brokers: every broker reaches every service's
/// handler, a broker that dies costs only its own sessions, and a shutdown leaves every broker.
@Suite struct WorkerPoolBrokersTests {
    /// A handler that answers with its service's name before the request body, so a reply tells
    /// which handler answered.
    static func tagging(_ service: String) -> WorkerPool.Handler {
        { body, _, _ in [bytes(service)] + body }
    }

    static let services: [(name: String, handler: WorkerPool.Handler)] = [("alpha", tagging("alpha")), ("beta", tagging("beta"))]

    static func registered(_ service: String, at broker: RunningBroker) -> Int {
        broker.broker.snapshot.services.first { $0.name == service }?.workers ?? 0
    }

    /// Sends one request for each service through `broker` and checks that its own handler answered.
    static func expectEachServiceAnswers(through broker: RunningBroker, context: Context, tag: String) throws {
        let client = Client(endpoint: broker.endpoint, configuration: ClientConfiguration(timeout: .seconds(3), attempts: 1), context: context)
        defer { client.close() }
        for service in ["alpha", "beta"] {
            #expect(try client.call(service, body: [bytes(tag)]) == [bytes(service), bytes(tag)])
        }
    }

    @Test func requestsThroughEitherBrokerReachTheirServicesHandler() throws {
        let context = try Context()
        let first = try RunningBroker(context: context)
        defer { first.stop() }
        let second = try RunningBroker(context: context)
        defer { second.stop() }
        let pool = try WorkerPool(endpoints: [first.endpoint, second.endpoint], services: Self.services, sessions: 2,
                                  configuration: WorkerConfiguration(heartbeat: fastHeartbeat), context: context)
        let thread = ComponentThread(pool, name: "pool")
        defer { thread.stop() }
        // Two sessions for each service at each broker, all on the one thread.
        for broker in [first, second] {
            #expect(eventually { Self.registered("alpha", at: broker) == 2 && Self.registered("beta", at: broker) == 2 })
        }
        try Self.expectEachServiceAnswers(through: first, context: context, tag: "via first")
        try Self.expectEachServiceAnswers(through: second, context: context, tag: "via second")
    }

    @Test func theOtherBrokerKeepsServingWhileOneIsDownAndTheFirstIsRejoined() throws {
        let context = try Context()
        var first = try RunningBroker(context: context)
        let firstEndpoint = first.endpoint
        let second = try RunningBroker(context: context)
        defer { second.stop() }
        let configuration = WorkerConfiguration(heartbeat: fastHeartbeat, reconnectInitialDelay: .milliseconds(50))
        let pool = try WorkerPool(endpoints: [firstEndpoint, second.endpoint], services: Self.services, sessions: 2,
                                  configuration: configuration, context: context)
        let thread = ComponentThread(pool, name: "pool")
        defer { thread.stop() }
        #expect(eventually { Self.registered("beta", at: first) == 2 && Self.registered("beta", at: second) == 2 })
        first.stop()
        // Well past the heartbeat expiry (300 ms): the first broker's sessions are reconnecting
        // with back-off while the second broker's keep serving on the same thread.
        pause(milliseconds: 600)
        for round in 0..<3 {
            try Self.expectEachServiceAnswers(through: second, context: context, tag: "round \(round)")
        }
        first = try RunningBroker(context: context, endpoint: firstEndpoint)
        defer { first.stop() }
        #expect(eventually { Self.registered("alpha", at: first) == 2 && Self.registered("beta", at: first) == 2 })
        try Self.expectEachServiceAnswers(through: first, context: context, tag: "rejoined")
    }

    @Test func shutdownDisconnectsFromEveryBroker() throws {
        let context = try Context()
        // Heartbeats far slower than the wait below: only a DISCONNECT can remove the workers in time.
        let slow = Heartbeat(interval: .seconds(5), liveness: 3)
        let first = try RunningBroker(BrokerConfiguration(heartbeat: slow), context: context)
        defer { first.stop() }
        let second = try RunningBroker(BrokerConfiguration(heartbeat: slow), context: context)
        defer { second.stop() }
        let pool = try WorkerPool(endpoints: [first.endpoint, second.endpoint], services: Self.services, sessions: 3,
                                  configuration: WorkerConfiguration(heartbeat: slow), context: context)
        let thread = ComponentThread(pool, name: "pool")
        for broker in [first, second] {
            #expect(eventually { Self.registered("alpha", at: broker) == 3 && Self.registered("beta", at: broker) == 3 })
        }
        pool.shutdown()
        thread.join()
        for broker in [first, second] {
            #expect(eventually { broker.broker.snapshot.services.allSatisfy { $0.workers == 0 } })
        }
    }

    @Test func poolRefusesMissingOrRepeatedBrokersAndServices() throws {
        let context = try Context()
        let echo: WorkerPool.Handler = { body, _, _ in body }
        let cases: [(endpoints: [String], services: [(name: String, handler: WorkerPool.Handler)])] = [
            ([], [("echo", echo)]),
            (["tcp://127.0.0.1:1", "tcp://127.0.0.1:1"], [("echo", echo)]),
            (["tcp://127.0.0.1:1"], []),
            (["tcp://127.0.0.1:1"], [("echo", echo), ("echo", echo)]),
            (["tcp://127.0.0.1:1"], [("echo", echo), ("mmi.echo", echo)]),
        ]
        for (endpoints, services) in cases {
            let error = #expect(throws: MajordomoError.self) {
                try WorkerPool(endpoints: endpoints, services: services, sessions: 1, context: context)
            }
            #expect(error?.code == .invalidArgument)
        }
    }
}
