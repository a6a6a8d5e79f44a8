import EventSubscription
import EventPublishing
import Foundation
import JSON
import LyceumTestSupport
import Synchronization
import Testing
import ZeroMQ

/// Snapshot replies in pages of bounded bytes (protocol/events.md, "Pages"; issue 14, finding 3d).
@Suite("Snapshot pages")
struct SnapshotPagingTests {
    /// Learner ids of 120 characters make entries of about 500 bytes, so that 1,200 learners
    /// make a snapshot of about 600 KB: one reply of old, many pages of the default 64 KiB now.
    static func learners(_ count: Int) -> [String] {
        (0..<count).map { "learner-\($0)-" + String(repeating: "x", count: 120 - "learner-\($0)-".count) }
    }

    /// Every learner begins a course of the sample catalog, spread over several courses.
    static func beginCourses(_ fixture: PublishingFixture, learners: [String]) {
        let courses = fixture.catalog.courses
        for (index, learner) in learners.enumerated() {
            fixture.write(#"{"op":"begin_course","learner":"\#(learner)","course":"\#(courses[index % courses.count].id)"}"#)
        }
    }

    @Test("a snapshot of many learners arrives in pages within the budget whose union is exactly the table")
    func pagesCoverTheTableOnce() throws {
        let fixture = try PublishingFixture(heartbeat: .seconds(30))
        Self.beginCourses(fixture, learners: Self.learners(1200))
        let truth = try fixture.progressThroughTheService()
        let dealer = try fixture.context.socket(.dealer)
        try dealer.set(.receiveTimeout, to: 5000)
        try dealer.connect(fixture.endpoints.snapshot[0])

        var seen: [String: PublishedProgressFields] = [:]
        var topics: [String] = []
        var cursor: [UInt8]?
        var pages = 0
        repeat {
            try dealer.send(multipart: [Array("SNAPSHOT".utf8), Array("progress/".utf8)] + (cursor.map { [$0] } ?? []))
            let reply = try #require(try dealer.receiveMultipart(), "no reply to page \(pages + 1)")
            pages += 1
            try #require(reply.count == 2 && reply[0] == Array("SNAPSHOT".utf8), "page \(pages): \(reply.map { String(decoding: $0, as: UTF8.self) })")
            #expect(reply[1].count <= 64 * 1024, "page \(pages) is \(reply[1].count) bytes")
            let body = try JSONParser().parse(reply[1])
            guard case .array(let entries) = body["entries"] else { throw TestFailure("page \(pages) has no entries") }
            #expect(!entries.isEmpty, "page \(pages) is empty")
            for entry in entries {
                guard case .string(let topic) = entry["topic"], let progress = entry["progress"] else { throw TestFailure("bad entry \(entry)") }
                #expect(seen[topic] == nil, "\(topic) served twice")
                seen[topic] = try PublishedProgressFields(progress)
                topics.append(topic)
            }
            if case .string(let next) = body["next_cursor"] { cursor = Array(next.utf8) } else { cursor = nil }
        } while cursor != nil && pages < 1000
        #expect(pages > 5, "\(pages) pages")
        #expect(topics == topics.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(seen.count == 1200)
        #expect(seen == truth)
    }

    @Test("a subscriber catching up follows the pages while events are published between them and ends with the service's state")
    func catchUpAcrossPages() throws {
        let fixture = try PublishingFixture()
        let learners = Self.learners(1200)
        Self.beginCourses(fixture, learners: learners)
        let writing = WritingFlag()
        // Writes to learners all over the topic order, behind and ahead of the pages served.
        let writer = ThreadResult("writer") { () -> Int in
            var written = 0
            while writing.isOn.load(ordering: .acquiring) {
                for request in fixture.requests(count: 200, learners: learners, seed: written) { fixture.write(request) }
                written += 200
            }
            return written
        }
        // Expectations are checked here, on the test's thread, from what the subscriber's thread returns.
        let (pages, advanced, mirror) = try ThreadResult("subscriber") { () throws -> (UInt64, Bool, [String: PublishedProgressFields]) in
            let subscriber = try ProgressSubscriber(
                context: fixture.context, options: .init(eventsEndpoint: fixture.endpoints.publish[0], snapshotEndpoint: fixture.endpoints.snapshot[0]))
            let pagesBefore = fixture.publisher.counters.snapshots
            let sequenceBefore = fixture.publisher.sequence
            _ = try subscriber.synchronize()
            let pages = fixture.publisher.counters.snapshots - pagesBefore
            let advanced = fixture.publisher.sequence > sequenceBefore
            writing.isOn.store(false, ordering: .releasing)
            _ = try writer.value()
            try fixture.catchUp(subscriber)
            return (pages, advanced, subscriber.entries.mapValues { PublishedProgressFields($0.progress) })
        }.value()
        #expect(pages > 5, "the snapshot came in \(pages) replies")
        #expect(advanced, "no event was published while the pages were served")
        let truth = try fixture.progressThroughTheService()
        #expect(truth.count >= 1200)
        #expect(mirror == truth)
    }
}

/// Tells a writer thread to keep going.
private final class WritingFlag: Sendable {
    let isOn = Atomic<Bool>(true)
}
