import EventSubscription
import EventPublishing
import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Progress
import Testing
import ZeroMQ

@Suite("Catching up: snapshots, gaps and slow subscribers")
struct CatchUpTests {
    @Test("a late joiner that snapshots, then applies newer events, ends identical to the progress service")
    func lateJoiner() throws {
        let fixture = try PublishingFixture()
        let learners = (0..<12).map { "learner-\($0)" }
        for request in fixture.requests(count: 300, learners: learners) { fixture.write(request) }
        // Writers keep going on two threads while the subscriber joins, so that events race the snapshot.
        let writers = (0..<2).map { seed in
            ThreadResult("writer-\(seed)") { for request in fixture.requests(count: 400, learners: learners, seed: seed + 1) { fixture.write(request) } }
        }
        let mirror = try ThreadResult("late joiner") { () throws -> [String: PublishedProgressFields] in
            let subscriber = try ProgressSubscriber(
                context: fixture.context,
                options: .init(eventsEndpoint: fixture.endpoints.publish[0], snapshotEndpoint: fixture.endpoints.snapshot[0]))
            let synchronized = try subscriber.synchronize()
            guard case .synchronized(_, let sequence, _) = synchronized.first, sequence >= 1 else {
                throw TestFailure("no snapshot: \(synchronized)")
            }
            for writer in writers { _ = try writer.value() }
            try fixture.catchUp(subscriber)
            return subscriber.entries.mapValues { PublishedProgressFields($0.progress) }
        }.value()
        let truth = try fixture.progressThroughTheService()
        #expect(truth.count > 20)
        #expect(mirror == truth)
    }

    @Test("a snapshot holds every event published before it was asked for")
    func snapshotsCoverEverythingPublishedBefore() throws {
        let fixture = try PublishingFixture(heartbeat: .seconds(30))
        let dealer = try fixture.context.socket(.dealer)
        try dealer.set(.receiveTimeout, to: 3000)
        try dealer.connect(fixture.endpoints.snapshot[0])
        // Inside a batch the publisher thread is not woken for the event: only the request wakes
        // it, and the answer must still include the event.
        try BatchedSignals.run { () throws in
            for request in fixture.requests(count: 200, learners: ["ada", "grace"]) where fixture.write(request) != nil {
                try dealer.send(multipart: [Array(SnapshotProtocol.snapshotCommand.utf8), Array(EventTopic.progress.utf8)])
                let reply = try #require(try dealer.receiveMultipart())
                #expect(try ReceivedSnapshot(body: reply[1]).sequence == fixture.publisher.sequence)
            }
        }
        #expect(fixture.publisher.sequence > 50)
    }

    @Test("progress events dropped from a full queue still reach snapshots, which report their numbers")
    func droppedEventsReachSnapshots() throws {
        let fixture = try PublishingFixture(queueCapacity: 1)
        // One write per learner: a dropped event's state reaches the snapshot only through the drop.
        for request in fixture.requests(count: 2000, learners: (0..<2000).map { "learner-\($0)" }) { fixture.write(request) }
        let counters = fixture.publisher.counters
        try #require(counters.dropped > 0, "\(counters)")
        let subscriber = try ProgressSubscriber(
            context: fixture.context, options: .init(eventsEndpoint: fixture.endpoints.publish[0], snapshotEndpoint: fixture.endpoints.snapshot[0]))
        // Nothing more is written: once the publisher thread has taken the queue, a snapshot holds every write.
        let synchronized = try subscriber.synchronize()
        guard case .synchronized(_, let sequence, _) = synchronized.first else { throw TestFailure("no snapshot: \(synchronized)") }
        #expect(sequence == counters.published)
        #expect(subscriber.entries.mapValues { PublishedProgressFields($0.progress) } == (try fixture.progressThroughTheService()))
    }

    @Test("a subscriber that does not read never slows publishing, and repairs the gaps it finds")
    func slowSubscriber() throws {
        let fixture = try PublishingFixture(sendHighWaterMark: 20)
        let learners = (0..<50).map { "slow-\($0)" }
        // Far more than the kernel's socket buffers and both high-water marks hold.
        let requests = fixture.requests(count: 40_000, learners: learners)
        // The reference: the same amount of writing with nobody subscribed.
        let reference = try PublishingFixture(sendHighWaterMark: 20)
        let referenceTime = ContinuousClock().measure { for request in reference.requests(count: 40_000, learners: learners) { reference.write(request) } }

        let subscriber = try ProgressSubscriber(
            context: fixture.context,
            options: .init(eventsEndpoint: fixture.endpoints.publish[0], snapshotEndpoint: fixture.endpoints.snapshot[0], receiveHighWaterMark: 20))
        _ = try subscriber.synchronize()
        #expect(try eventually { try subscriber.poll(timeout: .milliseconds(50)).contains { if case .heartbeat = $0 { true } else { false } } })
        // Now the subscriber stops reading while thousands of events are published.
        let slowTime = ContinuousClock().measure { for request in requests { fixture.write(request) } }
        #expect(fixture.publisher.counters.dropped == 0, "the publisher's own queue never filled")
        #expect(slowTime < referenceTime * 3 + .milliseconds(500), "publishing with a stalled subscriber took \(slowTime), without \(referenceTime)")

        var repaired = false
        var caughtUp = false
        let deadline = ContinuousClock.now + .seconds(15)
        while !caughtUp && ContinuousClock.now < deadline {
            for update in try subscriber.poll(timeout: .milliseconds(100)) {
                switch update {
                case .gapRepaired: repaired = true
                case .heartbeat(let heartbeat): caughtUp = heartbeat.sequence == fixture.publisher.sequence && repaired
                default: break
                }
            }
        }
        #expect(repaired, "the dropped events showed as a gap")
        #expect(caughtUp)
        #expect(subscriber.entries.mapValues { PublishedProgressFields($0.progress) } == (try fixture.progressThroughTheService()))
    }

    @Test("a heartbeat reveals missed events to an idle subscriber, which repairs them from a snapshot")
    func heartbeatRevealsTrailingGap() throws {
        let fixture = try PublishingFixture()
        let course = fixture.catalog.courses[0]
        // The subscriber's events come from a PUB the test controls, so it sees none of the
        // publisher's events: only the heartbeat the test forwards can tell it what it missed.
        let relay = try fixture.context.socket(.publisher)
        try relay.bind("tcp://127.0.0.1:*")
        let subscriber = try ProgressSubscriber(
            context: fixture.context,
            options: .init(eventsEndpoint: try relay.lastEndpoint, snapshotEndpoint: fixture.endpoints.snapshot[0], course: course.id))
        _ = try subscriber.synchronize()
        fixture.completeCourse(course, learner: "ada")
        let heartbeat = #"{"source":"\#(fixture.publisher.source)","seq":\#(fixture.publisher.sequence),"progress_seq":\#(fixture.publisher.sequence),"books_seq":0,"course_seq":{"\#(course.id)":\#(course.lessons.count)},"snapshot":null,"time":"2026-01-01T00:00:00.000Z"}"#
        var repaired: ProgressSubscriber.Update?
        _ = try eventually {
            try relay.send(multipart: [Array(EventTopic.heartbeat.utf8), Array(heartbeat.utf8)])
            repaired = try subscriber.poll(timeout: .milliseconds(50)).first { if case .gapRepaired = $0 { true } else { false } } ?? repaired
            return repaired != nil
        }
        guard case .gapRepaired(_, let expected, let seen, let sequence) = repaired else { throw TestFailure("no repair") }
        #expect(expected == 1 && seen == UInt64(course.lessons.count) && sequence == fixture.publisher.sequence)
        #expect(subscriber.entries[EventTopic.progress(course: course.id, learner: "ada")]?.progress.completed == true)
    }
}
