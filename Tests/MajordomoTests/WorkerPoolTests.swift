import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// Collects the deferred replies a pool's or a local service's handler hands out, so a test can
/// answer them later from its own thread.
final class HeldRequests: Sendable {
    private let held = Mutex<[(body: [[UInt8]], reply: DeferredReply)]>([])

    var count: Int { held.withLock { $0.count } }

    /// A handler that answers nothing at once and keeps every request.
    var handler: WorkerPool.Handler {
        { [self] body, _, later in
            held.withLock { $0.append((body, later)) }
            return nil
        }
    }

    /// Answers every held request with its own body, from the calling thread.
    func echoAll() {
        for request in held.withLock({ $0 }) { request.reply.send(request.body) }
        held.withLock { $0.removeAll() }
    }

    /// Answers every held request twice; the second replies must be dropped.
    func echoAllTwice() {
        let requests = held.withLock { $0 }
        for request in requests { request.reply.send(request.body) }
        for request in requests { request.reply.send([bytes("second reply")]) }
        held.withLock { $0.removeAll() }
    }
}

/// Several sessions on one thread: requests answered later hold a session, not the thread.
@Suite struct WorkerPoolTests {
    @Test func deferredRepliesLetOneThreadHoldARequestPerSession() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let held = HeldRequests()
        let pool = try WorkerPool(endpoint: broker.endpoint, service: "slow", sessions: 4,
                                  configuration: WorkerConfiguration(heartbeat: fastHeartbeat), context: context, handler: held.handler)
        let thread = ComponentThread(pool, name: "pool")
        defer { thread.stop() }
        let client = AsyncClient(endpoint: broker.endpoint, capacity: 6, context: context)
        defer { client.close() }
        var expected: [AsyncClient.RequestID: [[UInt8]]] = [:]
        for index in 0..<6 {
            let body = [bytes("request \(index)")]
            expected[try client.send("slow", body: body)] = body
        }
        // Four sessions, so four requests in hand at once on one thread, two queued at the broker.
        #expect(try eventually { held.count == 4 })
        pause(milliseconds: 100)
        #expect(held.count == 4)
        held.echoAllTwice()
        #expect(try eventually { held.count == 2 })
        held.echoAll()
        while !expected.isEmpty {
            let completion = try #require(try client.receive(timeout: .seconds(3)))
            #expect(try completion.result.get() == expected.removeValue(forKey: completion.id))
        }
        // The second replies were dropped by the pool, not passed on as answers to later requests.
        #expect(try client.receive(timeout: .milliseconds(200)) == nil)
    }

    @Test func shutdownSendsTheDeferredReplyThenDisconnects() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let held = HeldRequests()
        let pool = try WorkerPool(endpoint: broker.endpoint, service: "slow", sessions: 2,
                                  configuration: WorkerConfiguration(heartbeat: fastHeartbeat), context: context, handler: held.handler)
        let thread = ComponentThread(pool, name: "pool")
        let client = AsyncClient(endpoint: broker.endpoint, capacity: 1, context: context)
        defer { client.close() }
        let id = try client.send("slow", body: [bytes("in hand")])
        #expect(try eventually { held.count == 1 })
        pool.shutdown()
        pause(milliseconds: 100)
        // The idle session has left; the busy one waits for its reply.
        #expect(broker.broker.snapshot.services.first { $0.name == "slow" }?.workers == 1)
        held.echoAll()
        thread.join()
        let completion = try #require(try client.receive(timeout: .seconds(3)))
        #expect(completion.id == id)
        #expect(try completion.result.get() == [bytes("in hand")])
        #expect(try eventually { broker.broker.snapshot.services.first { $0.name == "slow" } == nil })
    }

    @Test func shutdownLeavesWithoutAReplyThatNeverComes() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let held = HeldRequests()
        let configuration = WorkerConfiguration(heartbeat: fastHeartbeat, drainTimeout: .milliseconds(200))
        let pool = try WorkerPool(endpoint: broker.endpoint, service: "stuck", sessions: 1, configuration: configuration,
                                  context: context, handler: held.handler)
        let thread = ComponentThread(pool, name: "pool")
        let client = AsyncClient(endpoint: broker.endpoint, capacity: 1, context: context)
        defer { client.close() }
        _ = try client.send("stuck", body: [bytes("never answered")])
        #expect(try eventually { held.count == 1 })
        let started = ContinuousClock.now
        pool.shutdown()
        thread.join()
        // It returned at all: the drain timeout (200 ms) ended the wait for the reply. A figure.
        print("the pool stopped in \(ContinuousClock.now - started) with a request never answered")
    }

    @Test func everySessionRegistersAgainAfterTheBrokerRestartsAndServes() throws {
        let context = try Context()
        var broker = try RunningBroker(context: context)
        let endpoint = broker.endpoint
        let configuration = WorkerConfiguration(heartbeat: fastHeartbeat, reconnectInitialDelay: .milliseconds(50))
        let pool = try WorkerPool(endpoint: endpoint, service: "echo", sessions: 3, configuration: configuration, context: context) { body, _, _ in body }
        let thread = ComponentThread(pool, name: "pool")
        defer { thread.stop() }
        func registeredSessions() -> Int { broker.broker.snapshot.services.first { $0.name == "echo" }?.workers ?? 0 }
        #expect(eventually { registeredSessions() == 3 })
        broker.stop()
        pause(milliseconds: 200)
        broker = try RunningBroker(context: context, endpoint: endpoint)
        defer { broker.stop() }
        // Each session noticed the silence on its own and started over on a new socket.
        #expect(eventually { registeredSessions() == 3 })
        let client = AsyncClient(endpoint: endpoint, capacity: 3, context: context)
        defer { client.close() }
        var expected: [AsyncClient.RequestID: [[UInt8]]] = [:]
        for index in 0..<3 {
            let body = [bytes("again \(index)")]
            expected[try client.send("echo", body: body)] = body
        }
        while !expected.isEmpty {
            let completion = try #require(try client.receive(timeout: .seconds(3)))
            #expect(try completion.result.get() == expected.removeValue(forKey: completion.id))
        }
    }

    @Test func poolRefusesNoSessionsAndManagementNames() throws {
        let context = try Context()
        #expect(throws: MajordomoError.self) {
            try WorkerPool(endpoint: "tcp://127.0.0.1:1", service: "echo", sessions: 0, context: context) { body, _, _ in body }
        }
        #expect(throws: MajordomoError.self) {
            try WorkerPool(endpoint: "tcp://127.0.0.1:1", service: "mmi.echo", sessions: 2, context: context) { body, _, _ in body }
        }
    }
}
