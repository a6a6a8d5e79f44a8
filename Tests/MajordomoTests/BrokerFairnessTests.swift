import Foundation
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// A deferred reply (a write's acknowledgement) is not held behind a long batch of costly requests.
@Suite struct BrokerFairnessTests {
    @Test func aDeferredReplyLeavesWhileAFloodOfCostlyRequestsIsHandled() throws {
        let context = try Context()
        let handled = Atomic<Int>(0)
        // A read that costs a millisecond, and a write answered through the outbox as a journal
        // sync would answer it: its reply can only leave when the broker's batch ends.
        let costly = LocalService(name: "read") { body, _, _ in
            usleep(1000)
            handled.add(1, ordering: .relaxed)
            return body
        }
        let write = LocalService(name: "write") { body, _, later in
            later.send(body)
            return nil
        }
        let broker = try RunningBroker(BrokerConfiguration(localServices: [costly, write]), context: context)
        defer { broker.stop() }
        let flood = 1500
        let reader = AsyncClient(endpoint: broker.endpoint, capacity: flood, context: context)
        defer { reader.close() }
        for index in 0..<flood { _ = try reader.send("read", body: [bytes("read \(index)")]) }
        #expect(try eventually { handled.load(ordering: .relaxed) > 10 })
        let writer = quickClient(broker.endpoint, context: context, timeout: .seconds(20), attempts: 1)
        let reply = try writer.call("write", body: [bytes("ack me")])
        let handledBeforeTheAck = handled.load(ordering: .relaxed)
        #expect(reply == [bytes("ack me")])
        // Without a time bound the whole flood is one batch and the ack comes after all of it.
        #expect(handledBeforeTheAck < flood / 2, "the ack waited for \(handledBeforeTheAck) of \(flood) costly requests")
        var replies = 0
        while replies < flood, try reader.receive(timeout: .seconds(10)) != nil { replies += 1 }
        #expect(replies == flood)
    }
}
