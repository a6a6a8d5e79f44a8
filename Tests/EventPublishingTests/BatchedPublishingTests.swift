import EventSubscription
import EventPublishing
import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Testing
import ZeroMQ

/// A loop that publishes many events per batch (a broker's, a journal acknowledger's) wakes the
/// publisher thread once per batch, without ever losing a wake-up or holding events long.
@Suite("Publishing from a batch")
struct BatchedPublishingTests {
    @Test("events published in a batch are sent once it ends, none lost")
    func sentWhenTheBatchEnds() throws {
        // Heartbeats 2 s apart, and the subscriber starts right after one: for the next ~2 s
        // only a wake-up sends what is queued.
        let fixture = try PublishingFixture(heartbeat: .seconds(2))
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.progress])
        let requests = fixture.requests(count: 40, learners: ["ada"])
        var published = 0
        try BatchedSignals.run { () throws in
            for request in requests where published < 3 {
                if fixture.write(request) != nil { published += 1 }
            }
            Thread.sleep(forTimeInterval: 0.3)
            try socket.set(.receiveTimeout, to: 0)
            #expect(try socket.receiveMultipart() == nil, "an event was sent before the batch ended")
        }
        try socket.set(.receiveTimeout, to: 1000)
        #expect(try receiveEvents(socket, count: 3).count == 3)
    }

    @Test("a long batch holds back at most maxHeldEvents events before waking the publisher")
    func aLongBatchWakesThePublisherEarly() throws {
        let fixture = try PublishingFixture(heartbeat: .seconds(2))
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.progress])
        let requests = fixture.requests(count: 400, learners: ["ada", "grace", "alan"])
        try BatchedSignals.run { () throws in
            var published = 0
            for request in requests where published < EventPublisher.maxHeldEvents {
                if fixture.write(request) != nil { published += 1 }
            }
            try #require(published == EventPublisher.maxHeldEvents)
            try socket.set(.receiveTimeout, to: 1000)
            #expect(try receiveEvents(socket, count: EventPublisher.maxHeldEvents).count == EventPublisher.maxHeldEvents)
        }
    }
}
