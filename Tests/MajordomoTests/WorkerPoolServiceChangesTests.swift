import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// Services added to and removed from a running pool, with real brokers: the other services
/// keep serving, requests in hand are answered, and the brokers see the sessions come and go.
@Suite struct WorkerPoolServiceChangesTests {
    static let configuration = WorkerConfiguration(heartbeat: fastHeartbeat, reconnectInitialDelay: .milliseconds(50))

    /// Sends `body` to `service` on a thread of its own; the reply (or the error) lands in the result.
    static func callInBackground(_ endpoint: String, _ service: String, _ body: String, context: Context) -> Locked<Result<[[UInt8]], MajordomoError>?> {
        let result = Locked<Result<[[UInt8]], MajordomoError>?>(nil)
        Thread.detachNewThread {
            let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(10), attempts: 1), context: context)
            defer { client.close() }
            result.set(Result { () throws(MajordomoError) in try client.call(service, body: [bytes(body)]) })
        }
        return result
    }

    @Test func removingAServiceAnswersItsRequestsInHandWhileTheOthersKeepServing() throws {
        let context = try Context()
        let first = try RunningBroker(context: context)
        defer { first.stop() }
        let second = try RunningBroker(context: context)
        defer { second.stop() }
        let held = HeldRequests()
        let pool = try WorkerPool(
            endpoints: [first.endpoint, second.endpoint],
            services: [("alpha", held.handler), ("beta", WorkerPoolBrokersTests.tagging("beta"))],
            sessions: 2, configuration: Self.configuration, context: context)
        let thread = ComponentThread(pool, name: "pool")
        defer { thread.stop() }
        for broker in [first, second] {
            #expect(eventually { WorkerPoolBrokersTests.registered("alpha", at: broker) == 2 && WorkerPoolBrokersTests.registered("beta", at: broker) == 2 })
        }
        // Two alpha requests in hand, one through each broker, when the removal starts.
        let inHand = [Self.callInBackground(first.endpoint, "alpha", "one", context: context),
                      Self.callInBackground(second.endpoint, "alpha", "two", context: context)]
        #expect(eventually { held.count == 2 })
        let removed = Locked(false)
        try pool.removeService("alpha") { removed.set(true) }
        #expect(pool.services == ["beta"])
        // The idle alpha sessions leave at once; beta keeps answering on the same thread.
        for broker in [first, second] {
            #expect(eventually { WorkerPoolBrokersTests.registered("alpha", at: broker) == 1 })
        }
        let client = quickClient(first.endpoint, context: context)
        defer { client.close() }
        for round in 0..<5 {
            #expect(try client.call("beta", body: [bytes("round \(round)")]) == [bytes("beta"), bytes("round \(round)")])
        }
        #expect(!removed.get())
        // The requests in hand are answered, not lost, and only then has alpha left.
        held.echoAll()
        for (call, body) in zip(inHand, ["one", "two"]) {
            #expect(eventually { call.get() != nil })
            #expect(try call.get()?.get() == [bytes(body)])
        }
        #expect(eventually { removed.get() })
        for broker in [first, second] {
            #expect(eventually { WorkerPoolBrokersTests.registered("alpha", at: broker) == 0 && WorkerPoolBrokersTests.registered("beta", at: broker) == 2 })
        }
        // Added again, alpha serves again, at every broker.
        try pool.addService("alpha", handler: WorkerPoolBrokersTests.tagging("alpha again"))
        #expect(pool.services == ["beta", "alpha"])
        for broker in [first, second] {
            #expect(eventually { WorkerPoolBrokersTests.registered("alpha", at: broker) == 2 })
            let again = quickClient(broker.endpoint, context: context)
            defer { again.close() }
            #expect(try again.call("alpha", body: [bytes("back")]) == [bytes("alpha again"), bytes("back")])
        }
    }

    @Test func theBlockingRemovalReturnsOnceTheServiceHasLeftEveryBroker() throws {
        let context = try Context()
        // Heartbeats far slower than the test: only the DISCONNECTs can remove the workers.
        let slow = Heartbeat(interval: .seconds(5), liveness: 3)
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: slow), context: context)
        defer { broker.stop() }
        let pool = try WorkerPool(endpoints: [broker.endpoint], services: WorkerPoolBrokersTests.services, sessions: 3,
                                  configuration: WorkerConfiguration(heartbeat: slow), context: context)
        let thread = ComponentThread(pool, name: "pool")
        defer { thread.stop() }
        #expect(eventually { WorkerPoolBrokersTests.registered("alpha", at: broker) == 3 && WorkerPoolBrokersTests.registered("beta", at: broker) == 3 })
        try pool.removeService("beta")
        #expect(eventually { WorkerPoolBrokersTests.registered("beta", at: broker) == 0 })
        #expect(WorkerPoolBrokersTests.registered("alpha", at: broker) == 3)
        let client = quickClient(broker.endpoint, context: context)
        defer { client.close() }
        #expect(try client.call("alpha", body: [bytes("still")]) == [bytes("alpha"), bytes("still")])
    }

    @Test func changesThatCannotBeMadeAreClearErrorsAndChangeNothing() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let pool = try WorkerPool(endpoints: [broker.endpoint], services: WorkerPoolBrokersTests.services, sessions: 1,
                                  configuration: Self.configuration, context: context)
        let thread = ComponentThread(pool, name: "pool")
        #expect(eventually { WorkerPoolBrokersTests.registered("alpha", at: broker) == 1 })
        let unknown = #expect(throws: MajordomoError.self) { try pool.removeService("gamma") }
        #expect(unknown?.code == .invalidArgument)
        #expect(unknown?.detail.contains("gamma") == true)
        for name in ["alpha", "", "mmi.alpha"] {
            let refused = #expect(throws: MajordomoError.self) { try pool.addService(name, handler: WorkerPoolBrokersTests.tagging(name)) }
            #expect(refused?.code == .invalidArgument)
        }
        #expect(pool.services == ["alpha", "beta"])
        // A handler waiting for its own pool would wait forever: refused instead.
        let fromHandler = Locked<MajordomoError?>(nil)
        try pool.addService("selfish") { _, _, _ in
            do throws(MajordomoError) { try pool.removeService("alpha") } catch { fromHandler.set(error) }
            return [bytes("done")]
        }
        let client = quickClient(broker.endpoint, context: context)
        defer { client.close() }
        #expect(eventually { WorkerPoolBrokersTests.registered("selfish", at: broker) == 1 })
        #expect(try client.call("selfish", body: []) == [bytes("done")])
        #expect(fromHandler.get()?.code == .invalidArgument)
        #expect(pool.services == ["alpha", "beta", "selfish"])
        thread.stop()
        // Once stopped, a removal completes at once and an addition is refused.
        try pool.removeService("beta")
        #expect(throws: MajordomoError.self) { try pool.addService("beta", handler: WorkerPoolBrokersTests.tagging("beta")) }
    }
}
