@testable import EventPublishing
import Foundation
import Testing
import ZeroMQ

@Suite("The publisher's view of subscriptions")
struct SubscriptionSetTests {
    @Test("subscribe and unsubscribe messages add and remove prefixes; other messages change nothing")
    func subscriptionMessages() {
        var subscriptions = SubscriptionSet()
        #expect(!subscriptions.wants(Array("progress/c1/ada".utf8)))
        subscriptions.apply([1] + Array("progress/c1/".utf8))
        #expect(subscriptions.wants(Array("progress/c1/ada".utf8)))
        #expect(!subscriptions.wants(Array("progress/c2/ada".utf8)))
        #expect(!subscriptions.wants(Array("xapi/progress/c1/ada".utf8)))
        subscriptions.apply([])
        subscriptions.apply([7] + Array("xapi/".utf8))
        #expect(!subscriptions.wants(Array("xapi/progress/c1/ada".utf8)))
        subscriptions.apply([0] + Array("progress/c1/".utf8))
        #expect(!subscriptions.wants(Array("progress/c1/ada".utf8)))
        subscriptions.apply([1] + Array("xapi/progress/c1/".utf8))
        #expect(subscriptions.wants(Array("xapi/".utf8), followedBy: Array("progress/c1/ada".utf8)))
        #expect(!subscriptions.wants(Array("xapi/".utf8), followedBy: Array("progress/c2/ada".utf8)))
        #expect(!subscriptions.wants(Array("xapi/".utf8), followedBy: Array("progress/c".utf8)))
        subscriptions.apply([1] + Array("xa".utf8))
        #expect(subscriptions.wants(Array("xapi/".utf8), followedBy: Array("progress/c2/ada".utf8)), "a prefix shorter than the head")
        subscriptions.apply([1])
        #expect(subscriptions.wants(Array("books/ada/1".utf8)), "the empty prefix takes everything")
    }

    @Test("an XPUB socket passes up the first subscription to a prefix and the last one going, disconnection included")
    func xpubReportsWhatTheSetNeeds() throws {
        let context = try Context()
        let publisher = try context.socket(.extendedPublisher)
        try publisher.bind("tcp://127.0.0.1:*")
        let endpoint = try publisher.lastEndpoint
        try publisher.set(.receiveTimeout, to: 5000)
        var subscriptions = SubscriptionSet()
        let topic = Array("progress/c1/ada".utf8)

        let first = try context.socket(.subscriber)
        try first.set(.subscribe, to: Array("progress/".utf8))
        try first.connect(endpoint)
        subscriptions.apply(try #require(try publisher.receive()))
        #expect(subscriptions.wants(topic))

        let second = try context.socket(.subscriber)
        try second.set(.subscribe, to: Array("progress/".utf8))
        try second.connect(endpoint)
        // Only once the second subscription has reached the socket (a message gets through) is
        // the first one's leaving not the prefix's last.
        try second.set(.receiveTimeout, to: 50)
        var probes = 0
        while try second.receive() == nil {
            probes += 1
            try #require(probes < 100, "the second subscription never arrived")
            try publisher.send(Array("progress/probe".utf8))
        }
        first.close()
        // The second subscriber keeps the prefix: nothing is passed up until it goes too.
        try publisher.set(.receiveTimeout, to: 300)
        #expect(try publisher.receive() == nil)
        #expect(subscriptions.wants(topic))
        second.close()
        try publisher.set(.receiveTimeout, to: 5000)
        subscriptions.apply(try #require(try publisher.receive()))
        #expect(!subscriptions.wants(topic))
    }
}
