import Foundation
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// Services the broker answers itself: ordinary 7/MDP services to clients, never to workers.
@Suite struct LocalServiceTests {
    static func broker(_ services: [LocalService], maxQueued: Int = 1000, context: Context) throws -> RunningBroker {
        try RunningBroker(BrokerConfiguration(
            heartbeat: fastHeartbeat, maxRequestDuration: .milliseconds(300), maxQueuedRequestsPerService: maxQueued,
            localServices: services), context: context)
    }

    @Test func answersOnTheWireAsAnyServiceDoesIncludingABinaryAddress() throws {
        let context = try Context()
        let broker = try Self.broker([LocalService(name: "shout") { body, _, _ in body.map { $0.map { $0 & 0xDF } } }], context: context)
        defer { broker.stop() }
        let client = try context.socket(.dealer)
        defer { client.close() }
        try client.set(.routingID, to: [0x43, 0x00, 0xFF])
        try client.connect(broker.endpoint)
        try client.send(multipart: [[], MDP.clientHeader, bytes("shout"), bytes("hello")])
        let reply = try #require(try receive(client))
        #expect(reply == [[], MDP.clientHeader, bytes("shout"), bytes("HELLO")])
        let quick = quickClient(broker.endpoint, context: context)
        #expect(try quick.isRegistered("shout"))
        #expect(try eventually { broker.broker.snapshot.services == [.init(name: "shout", workers: 0, idleWorkers: 0, queuedRequests: 0, isLocal: true)] })
    }

    @Test func deferredRepliesComeFromAnotherThreadAndASecondIsDropped() throws {
        let context = try Context()
        let held = HeldRequests()
        let broker = try Self.broker([LocalService(name: "later", handler: held.handler)], context: context)
        defer { broker.stop() }
        let client = AsyncClient(endpoint: broker.endpoint, capacity: 10, context: context)
        defer { client.close() }
        var expected: [AsyncClient.RequestID: [[UInt8]]] = [:]
        for index in 0..<10 {
            let body = [bytes("write \(index)")]
            expected[try client.send("later", body: body)] = body
        }
        #expect(try eventually { held.count == 10 })
        Thread.detachNewThread { held.echoAllTwice() }
        while !expected.isEmpty {
            let completion = try #require(try client.receive(timeout: .seconds(3)))
            #expect(try completion.result.get() == expected.removeValue(forKey: completion.id))
        }
        #expect(try client.receive(timeout: .milliseconds(200)) == nil)
    }

    @Test func requestsWaitingBeyondTheLimitGetQueueFull() throws {
        let context = try Context()
        let held = HeldRequests()
        let broker = try Self.broker([LocalService(name: "later", handler: held.handler)], maxQueued: 2, context: context)
        defer { broker.stop() }
        let waiting = AsyncClient(endpoint: broker.endpoint, capacity: 2, context: context)
        defer { waiting.close() }
        _ = try waiting.send("later", body: [bytes("1")])
        _ = try waiting.send("later", body: [bytes("2")])
        #expect(try eventually { held.count == 2 })
        #expect(try eventually { broker.broker.snapshot.services.first?.queuedRequests == 2 })
        #expect {
            try quickClient(broker.endpoint, context: context).call("later", body: [bytes("3")])
        } throws: { ($0 as? MajordomoError)?.code == .queueFull }
        held.echoAll()
        #expect(try waiting.receive(timeout: .seconds(3)) != nil)
        #expect(try waiting.receive(timeout: .seconds(3)) != nil)
    }

    @Test func aWorkerCannotRegisterForALocalService() throws {
        let context = try Context()
        let broker = try Self.broker([LocalService(name: "books") { body, _, _ in body }], context: context)
        defer { broker.stop() }
        let worker = try context.socket(.dealer)
        defer { worker.close() }
        try worker.connect(broker.endpoint)
        try worker.send(multipart: WorkerCommand.ready(service: bytes("books")).frames)
        let answer = try #require(try receive(worker) { $0.count >= 3 && $0[2] == WorkerCommand.disconnect.frames[2] })
        #expect(answer == WorkerCommand.disconnect.frames)
    }

    @Test func shutdownSendsTheRepliesStillWaiting() throws {
        let context = try Context()
        let held = HeldRequests()
        let broker = try Self.broker([LocalService(name: "later", handler: held.handler)], context: context)
        let client = AsyncClient(endpoint: broker.endpoint, capacity: 1, context: context)
        defer { client.close() }
        _ = try client.send("later", body: [bytes("durable soon")])
        #expect(try eventually { held.count == 1 })
        broker.broker.shutdown()
        Thread.detachNewThread {
            pause(milliseconds: 50)
            held.echoAll()
        }
        // Read while the broker drains: a client with ZMQ_IMMEDIATE loses what it has not read
        // when the connection ends.
        let completion = try #require(try client.receive(timeout: .seconds(3)))
        #expect(try completion.result.get() == [bytes("durable soon")])
        broker.thread.join()
    }

    @Test func invalidLocalServiceNamesAreRefused() throws {
        let context = try Context()
        for names in [[""], ["mmi.x"], ["twice", "twice"]] {
            #expect(throws: MajordomoError.self) {
                try Broker(endpoints: ["tcp://127.0.0.1:*"],
                           configuration: BrokerConfiguration(localServices: names.map { LocalService(name: $0) { body, _, _ in body } }),
                           context: context)
            }
        }
    }
}
