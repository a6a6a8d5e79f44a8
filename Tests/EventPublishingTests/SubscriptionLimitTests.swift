import EventSubscription
import EventPublishing
import LyceumLifecycle
import LyceumTestSupport
import Testing
import ZeroMQ

/// Issue 14, findings 2 and 3b: a subscription prefix longer than ``EventTopic/maxSubscriptionBytes``
/// never reaches libzmq's subscription trie on the forwarder's XPUB (one of 128 KiB used to crash
/// `lyceum broker` when its subscriber left) nor, through it, the publishers upstream.
@Suite struct SubscriptionLimitTests {
    @Test func anOversizedPrefixIsRefusedAndTheForwarderKeepsForwarding() throws {
        let context = try Context()
        let forwarder = try EventForwarder(publisherEndpoints: ["tcp://127.0.0.1:*"], subscriberEndpoints: ["tcp://127.0.0.1:*"], context: context)
        let forwarderThread = ComponentThread(forwarder, name: "forwarder")
        defer { forwarderThread.stop() }
        let bound = try forwarder.waitUntilBound()
        let source = try PublishingFixture(context: context, forwarder: bound.publishers[0])
        defer { withExtendedLifetime(source) {} }

        // The hostile subscriber: one 128 KiB prefix, along with the heartbeats it would like.
        let hostile = try context.socket(.subscriber)
        try hostile.set(.subscribe, to: Array(EventTopic.heartbeat.utf8))
        try hostile.set(.subscribe, to: [UInt8](repeating: UInt8(ascii: "p"), count: 128 * 1024))
        try hostile.set(.receiveTimeout, to: 1500)
        try hostile.connect(bound.subscribers[0])
        #expect(try hostile.receiveMultipart() == nil, "its connection is dropped, so none of its subscriptions is applied")
        hostile.close()

        // A prefix at the limit is still taken, and the forwarder still forwards.
        let longest = EventTopic.progress + String(repeating: "c", count: EventTopic.maxSubscriptionBytes - EventTopic.progress.utf8.count)
        let normal = try subscribedSocket(context, to: bound.subscribers[0], prefixes: [longest])
        #expect(try normal.receiveMultipart() != nil)
        #expect(forwarder.forwardedMessages > 0)
    }

    @Test func aPublisherRefusesAnOversizedPrefixAndServesOthers() throws {
        let fixture = try PublishingFixture()
        let hostile = try fixture.context.socket(.subscriber)
        try hostile.set(.subscribe, to: Array(EventTopic.heartbeat.utf8))
        try hostile.set(.subscribe, to: [UInt8](repeating: UInt8(ascii: "p"), count: EventTopic.maxSubscriptionBytes + 1))
        try hostile.set(.receiveTimeout, to: 1500)
        try hostile.connect(fixture.endpoints.publish[0])
        #expect(try hostile.receiveMultipart() == nil)
        let normal = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.progress])
        #expect(try normal.receiveMultipart() != nil)
    }
}
