import Books
import EventSubscription
import EventPublishing
import Foundation
import JSON
import LyceumLifecycle
import LyceumTestSupport
import Testing

@Suite("Publishing book events")
struct BookEventTests {
    static func book(_ id: String, learner: String, version: Int, title: String = "Dune") -> Book {
        Book(
            id: id, learner: learner, title: title, author: "Frank Herbert", genre: .fantasy, rating: 5, review: "Spice, \"sand\" and politics.",
            version: version, createdAt: 1_764_520_802_511, updatedAt: 1_764_520_802_511 + Int64(version) * 1000)
    }

    /// A created, an updated and a deleted book of `learner`.
    static func lifecycle(learner: String, bookID: String) -> [BookEvent] {
        [
            BookEvent(kind: .created, learner: learner, bookID: bookID, book: book(bookID, learner: learner, version: 1)),
            BookEvent(kind: .updated, learner: learner, bookID: bookID, book: book(bookID, learner: learner, version: 2, title: "Dune Messiah")),
            BookEvent(kind: .deleted, learner: learner, bookID: bookID, book: nil),
        ]
    }

    @Test("book events go out on books/<learner>/<book id> with the book after the change, numbered in the source's one sequence")
    func bookEvents() throws {
        let fixture = try PublishingFixture()
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.books, EventTopic.progress])
        let course = fixture.catalog.courses[0]
        let bookEvents = Self.lifecycle(learner: "ada", bookID: "00000000-0000-4000-8000-000000000001")
            + Self.lifecycle(learner: "grace/h%", bookID: "00000000-0000-4000-8000-000000000002")
        // Progress and book events interleaved, as a host serving both publishes them.
        for (index, event) in bookEvents.enumerated() {
            fixture.publisher.publish(event, on: .books, revision: UInt64(100 + index))
            fixture.write(#"{"op":"mark_\#(index % 2 == 0 ? "" : "un")watched","learner":"ada","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#)
        }
        let received = try receiveEvents(socket, count: 2 * bookEvents.count)
        var books: [ReceivedBookEvent] = []
        for (index, message) in received.enumerated() {
            if message.topic.hasPrefix(EventTopic.books) {
                let event = try ReceivedBookEvent(topic: message.topic, body: message.body)
                #expect(event.sequence == UInt64(index + 1))
                books.append(event)
            } else {
                let event = try ReceivedProgressEvent(topic: message.topic, body: message.body)
                #expect(event.sequence == UInt64(index + 1) && event.progressSequence == UInt64(index / 2 + 1))
            }
        }
        #expect(books.count == bookEvents.count)
        for (index, (sent, event)) in zip(bookEvents, books).enumerated() {
            #expect(event.topic == EventTopic.book(learner: sent.learner, bookID: sent.bookID))
            #expect(event.booksSequence == UInt64(index + 1) && event.source == fixture.publisher.source.description)
            #expect(event.type == sent.kind.rawValue && event.learner == sent.learner && event.bookID == sent.bookID)
            #expect(event.revision == UInt64(100 + index))
            if let book = sent.book {
                let published = try #require(event.book)
                #expect(published.id == book.id && published.title == book.title && published.author == book.author)
                #expect(published.genre == "Fantasy" && published.rating == 5 && published.review == book.review && published.version == book.version)
                #expect(published.createdAt == "2025-11-30T16:40:02.511Z")
                #expect(published.updatedAt == (book.version == 1 ? "2025-11-30T16:40:03.511Z" : "2025-11-30T16:40:04.511Z"))
                #expect(event.time == event.book?.updatedAt)
            } else {
                #expect(event.book == nil)
                #expect(try JSONParser().parse(event.body)["book"] == .null, "a deletion carries \"book\": null")
            }
        }
        #expect(received.first { $0.topic.hasPrefix(EventTopic.books) }?.topic == "books/ada/00000000-0000-4000-8000-000000000001")
        #expect(books.last?.topic == "books/grace%2Fh%25/00000000-0000-4000-8000-000000000002")
        #expect(fixture.publisher.counters.published == UInt64(2 * bookEvents.count))
    }

    @Test("a learner's prefix selects that library only")
    func learnerFilter() throws {
        let fixture = try PublishingFixture()
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.booksPrefix(learner: "ada")])
        for event in Self.lifecycle(learner: "ada2", bookID: "b-2") + Self.lifecycle(learner: "ada", bookID: "b-1") {
            fixture.publisher.publish(event, on: .books, revision: 1)
        }
        let received = try receiveEvents(socket, count: 3)
        #expect(received.allSatisfy { $0.topic == "books/ada/b-1" })
        #expect(try received.map { try ReceivedBookEvent(topic: $0.topic, body: $0.body).booksSequence } == [4, 5, 6])
    }

    @Test("book events between progress events are no gap to a progress subscriber")
    func progressSubscriberIgnoresBooks() throws {
        let fixture = try PublishingFixture(heartbeat: .milliseconds(50))
        let subscriber = try ProgressSubscriber(
            context: fixture.context, options: .init(eventsEndpoint: fixture.endpoints.publish[0], snapshotEndpoint: fixture.endpoints.snapshot[0]))
        _ = try subscriber.synchronize()
        #expect(try eventually { try subscriber.poll(timeout: .milliseconds(50)).contains { if case .heartbeat = $0 { true } else { false } } })
        var progressEvents = 0
        for (index, request) in fixture.requests(count: 200, learners: ["ada", "grace"]).enumerated() {
            if fixture.write(request) != nil { progressEvents += 1 }
            if index % 10 == 0 { fixture.publisher.publish(Self.lifecycle(learner: "ada", bookID: "b-\(index)")[0], on: .books, revision: UInt64(index)) }
        }
        var applied = 0
        var problems: [String] = []
        var heartbeatSeen = false
        let total = fixture.publisher.sequence
        #expect(try eventually {
            for update in try subscriber.poll(timeout: .milliseconds(50)) {
                switch update {
                case .event: applied += 1
                case .heartbeat(let heartbeat): heartbeatSeen = heartbeatSeen || heartbeat.sequence == total
                case .gapRepaired, .gapUnrepaired, .malformed, .synchronized: problems.append("\(update)")
                }
            }
            return applied == progressEvents && heartbeatSeen
        })
        #expect(problems.isEmpty)
        #expect(subscriber.entries.mapValues { PublishedProgressFields($0.progress) } == (try fixture.progressThroughTheService()))
    }

    @Test("a full publisher queue drops events without blocking; they keep their numbers, so subscribers see the gap")
    func fullQueue() throws {
        let fixture = try PublishingFixture(queueCapacity: 1)
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.books])
        let count = 5000
        for index in 0..<count {
            fixture.publisher.publish(Self.lifecycle(learner: "ada", bookID: "b-\(index)")[0], on: .books, revision: UInt64(index + 1))
        }
        let counters = fixture.publisher.counters
        #expect(counters.published == UInt64(count) && counters.dropped > 0, "\(counters)")
        let delivered = count - Int(counters.dropped)
        let received = try receiveEvents(socket, count: delivered).map { try ReceivedBookEvent(topic: $0.topic, body: $0.body) }
        #expect(zip(received, received.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
        #expect(received.contains { $0.sequence != $0.booksSequence } == false)
        #expect(zip(received, received.dropFirst()).contains { $1.sequence > $0.sequence + 1 } || received.last?.sequence != UInt64(count))
        // Heartbeats announce the last number, dropped or not.
        try socket.set(.receiveTimeout, to: 3000)
        #expect(try eventually {
            guard let frames = try socket.receiveMultipart(), frames.first == Array(EventTopic.heartbeat.utf8) else { return false }
            return try ReceivedHeartbeat(body: frames[1]).booksSequence == UInt64(count)
        })
    }

    @Test("events published from several threads at once, in batches or not, leave in sequence order without gaps")
    func concurrentPublishers() throws {
        let fixture = try PublishingFixture()
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.books])
        let threads = 4
        let perThread = 600
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let events = (0..<perThread / 3).flatMap { Self.lifecycle(learner: "t\(thread)", bookID: "b-\($0)") }
            // Half the threads publish as a broker's loop does, in batches of varied length.
            guard thread % 2 == 1 else { return events.forEach { fixture.publisher.publish($0, on: .books, revision: 1) } }
            var index = 0
            while index < events.count {
                let batch = events[index..<min(events.count, index + 1 + index % 40)]
                BatchedSignals.run { batch.forEach { fixture.publisher.publish($0, on: .books, revision: 1) } }
                index += batch.count
            }
        }
        let received = try receiveEvents(socket, count: threads * perThread).map { try ReceivedBookEvent(topic: $0.topic, body: $0.body) }
        #expect(received.map(\.sequence) == (1...UInt64(threads * perThread)).map { $0 })
        #expect(received.map(\.booksSequence) == received.map(\.sequence))
        // Each thread's events keep their order.
        let lifecycleOrder = (0..<perThread / 3).flatMap { ["b-\($0) book_created", "b-\($0) book_updated", "b-\($0) book_deleted"] }
        for thread in 0..<threads {
            #expect(received.filter { $0.learner == "t\(thread)" }.map { "\($0.bookID) \($0.type)" } == lifecycleOrder)
        }
    }
}
