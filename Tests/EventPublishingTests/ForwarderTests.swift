import EventSubscription
import EventPublishing
import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Testing
import ZeroMQ

@Suite("Forwarding events from several publishers")
struct ForwarderTests {
    @Test("two publishers behind one forwarder: sequences stay per source, and a subscriber mirrors both")
    func twoPublishers() throws {
        let context = try Context()
        let forwarder = try EventForwarder(publisherEndpoints: ["tcp://127.0.0.1:*"], subscriberEndpoints: ["tcp://127.0.0.1:*"], context: context)
        let forwarderThread = ComponentThread(forwarder, name: "forwarder")
        defer { forwarderThread.stop() }
        let bound = try forwarder.waitUntilBound()
        let workers = try (0..<2).map { _ in try PublishingFixture(context: context, forwarder: bound.publishers[0]) }
        let raw = try subscribedSocket(context, to: bound.subscribers[0], prefixes: [EventTopic.progress])
        // Both sources must reach the forwarder before events count.
        var heartbeatSources = Set<String>()
        try raw.set(.receiveTimeout, to: 5000)
        while heartbeatSources.count < 2, let frames = try raw.receiveMultipart() {
            if frames[0] == Array(EventTopic.heartbeat.utf8) { heartbeatSources.insert(try ReceivedHeartbeat(body: frames[1]).source) }
        }
        #expect(heartbeatSources == Set(workers.map(\.publisher.source.description)))

        // The mirror joins without a snapshot endpoint: it learns each source's from its heartbeats.
        let mirror = try ProgressSubscriber(context: context, options: .init(eventsEndpoint: bound.subscribers[0]))
        let writers = workers.enumerated().map { index, worker in
            ThreadResult("worker-\(index)") { worker.requests(count: 300, learners: ["w\(index)-a", "w\(index)-b", "w\(index)-c"], seed: index).compactMap { worker.write($0) }.count }
        }
        let counts = try writers.map { try $0.value() }
        let received = try receiveEvents(raw, count: counts.reduce(0, +))
        var last: [String: UInt64] = [:]
        for message in received {
            let event = try ReceivedProgressEvent(topic: message.topic, body: message.body)
            #expect(event.sequence == last[event.source, default: 0] + 1, "consecutive per source")
            last[event.source] = event.sequence
        }
        #expect(last.count == 2 && last.values.sorted() == counts.map(UInt64.init).sorted())

        var synchronized = Set<String>()
        var caughtUp = Set<String>()
        let deadline = ContinuousClock.now + .seconds(10)
        while caughtUp.count < 2 && ContinuousClock.now < deadline {
            for update in try mirror.poll(timeout: .milliseconds(100)) {
                switch update {
                case .synchronized(let source, _, _): synchronized.insert(source)
                case .heartbeat(let heartbeat) where synchronized.contains(heartbeat.source) && heartbeat.sequence == last[heartbeat.source]:
                    caughtUp.insert(heartbeat.source)
                default: break
                }
            }
        }
        #expect(caughtUp.count == 2)
        var truth: [String: PublishedProgressFields] = [:]
        for worker in workers { truth.merge(try worker.progressThroughTheService()) { $1 } }
        #expect(mirror.entries.mapValues { PublishedProgressFields($0.progress) } == truth)
        #expect(forwarder.forwardedMessages > 0)
    }
}
