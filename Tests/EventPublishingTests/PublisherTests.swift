import EventSubscription
import EventPublishing
import Foundation
import JSON
import LyceumTestSupport
import Progress
import Testing
import ZeroMQ

@Suite("Publishing progress events")
struct PublisherTests {
    @Test("every durable change is published once, in order, with consecutive sequence numbers; failed writes never")
    func oneEventPerDurableChange() throws {
        let fixture = try PublishingFixture()
        let endpoint = fixture.endpoints.publish[0]
        let socket = try subscribedSocket(fixture.context, to: endpoint, prefixes: [EventTopic.progress])
        let requests = fixture.requests(count: 400, learners: ["ada", "grace", "alan.t", "b+c@x"])
        let events = requests.compactMap { fixture.write($0) }
        #expect(events.count > 50 && events.count < requests.count, "the mix has writes that change nothing or fail")
        let received = try receiveEvents(socket, count: events.count)
        try socket.set(.receiveTimeout, to: 300)
        let extra = try socket.receiveMultipart().map { String(decoding: $0[0], as: UTF8.self) }
        #expect(extra == nil || extra == EventTopic.heartbeat, "nothing beyond one event per change")

        var courseSequences: [String: UInt64] = [:]
        for (index, (event, message)) in zip(events, received).enumerated() {
            let decoded = try ReceivedProgressEvent(topic: message.topic, body: message.body)
            #expect(decoded.sequence == UInt64(index + 1))
            #expect(decoded.source == fixture.publisher.source.description)
            #expect(message.topic == EventTopic.progress(course: event.course, learner: event.learner))
            #expect(decoded.type == event.kind.rawValue && decoded.learner == event.learner && decoded.course == event.course)
            #expect(decoded.lesson == event.lesson && decoded.progress.percent == event.summary.percent)
            #expect(decoded.completesCourse == event.completesCourse)
            #expect(decoded.quiz?.score == event.attempt?.score)
            let expectedCourseSequence = courseSequences[event.course, default: 0] + 1
            #expect(decoded.courseSequence == expectedCourseSequence)
            courseSequences[event.course] = expectedCourseSequence
        }
        #expect(fixture.publisher.counters.published == UInt64(events.count) && fixture.publisher.counters.dropped == 0)
    }

    @Test("topics escape '/' and '%' so that a prefix selects one course or one learner")
    func topicEscaping() {
        #expect(EventTopic.progress(course: "a/b", learner: "50%") == "progress/a%2Fb/50%25")
        #expect(EventTopic.progressPrefix(course: "c1") == "progress/c1/")
        #expect(EventTopic.progressPrefix(course: nil) == "progress/")
        #expect(EventTopic.escape("plain-id") == "plain-id")
    }

    @Test("a course subscription receives only that course, with consecutive course sequence numbers")
    func courseFilter() throws {
        let fixture = try PublishingFixture()
        let course = fixture.catalog.courses[0]
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.progressPrefix(course: course.id)])
        let events = fixture.requests(count: 300, learners: ["ada", "grace"]).compactMap { fixture.write($0) }.filter { $0.course == course.id }
        let received = try receiveEvents(socket, count: events.count)
        for (index, message) in received.enumerated() {
            let decoded = try ReceivedProgressEvent(topic: message.topic, body: message.body)
            #expect(decoded.course == course.id && decoded.courseSequence == UInt64(index + 1))
        }
    }

    @Test("the snapshot server refuses malformed requests with a structured error and keeps serving")
    func snapshotRefusals() throws {
        let fixture = try PublishingFixture()
        let dealer = try fixture.context.socket(.dealer)
        try dealer.set(.receiveTimeout, to: 3000)
        try dealer.connect(fixture.endpoints.snapshot[0])
        for request: [[UInt8]] in [[Array("SNAPSHOT".utf8)], [Array("HELLO".utf8), Array("progress/".utf8)], [Array("SNAPSHOT".utf8), Array("books/".utf8)], [Array("SNAPSHOT".utf8), [0xFF, 0xFE]]] {
            try dealer.send(multipart: request)
            let reply = try #require(try dealer.receiveMultipart())
            #expect(reply.count == 2 && reply[0] == Array("ERROR".utf8))
            let body = try JSONParser().parse(reply[1])
            #expect(body["error"] == "malformed")
        }
        fixture.write(#"{"op":"begin_course","learner":"ada","course":"\#(fixture.catalog.courses[0].id)"}"#)
        try dealer.send(multipart: [Array("SNAPSHOT".utf8), Array("progress/".utf8)])
        let reply = try #require(try dealer.receiveMultipart())
        let snapshot = try ReceivedSnapshot(body: reply[1])
        #expect(snapshot.sequence == 1 && snapshot.entries.count == 1 && snapshot.source == fixture.publisher.source.description)
    }

    @Test("events of one learner in one course published out of write order leave the newest state")
    func outOfOrderPublication() throws {
        let fixture = try PublishingFixture()
        let course = fixture.catalog.courses[0]
        let first = fixture.service.handleWithCommit(Array(#"{"op":"mark_watched","learner":"ada","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#.utf8))
        let second = fixture.service.handleWithCommit(Array(#"{"op":"mark_unwatched","learner":"ada","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#.utf8))
        let subscriber = try ProgressSubscriber(
            context: fixture.context,
            options: .init(eventsEndpoint: fixture.endpoints.publish[0], snapshotEndpoint: fixture.endpoints.snapshot[0]))
        _ = try subscriber.synchronize()
        #expect(try eventually { try subscriber.poll(timeout: .milliseconds(50)).contains { if case .heartbeat = $0 { true } else { false } } })
        fixture.publisher.publish(try #require(second.event), on: .progress, revision: try #require(second.commit).sequence)
        fixture.publisher.publish(try #require(first.event), on: .progress, revision: try #require(first.commit).sequence)
        var applied = 0
        #expect(try eventually {
            applied += try subscriber.poll(timeout: .milliseconds(50)).filter { if case .event = $0 { true } else { false } }.count
            return applied == 2
        })
        let topic = EventTopic.progress(course: course.id, learner: "ada")
        #expect(subscriber.entries[topic]?.progress.watchedCount == 0, "the unwatch is the newer write")
        let late = try ProgressSubscriber(
            context: fixture.context,
            options: .init(eventsEndpoint: fixture.endpoints.publish[0], snapshotEndpoint: fixture.endpoints.snapshot[0]))
        _ = try late.synchronize()
        #expect(late.entries[topic]?.progress.watchedCount == 0 && late.entries[topic]?.revision == second.commit?.sequence)
    }

    @Test("each progress event is also offered as xAPI statements with ADL verbs")
    func xapiStatements() throws {
        let fixture = try PublishingFixture()
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.xapi])
        let course = try #require(fixture.catalog.courses.first { $0.quiz != nil && !$0.lessons.isEmpty })
        let quiz = try #require(course.quiz)
        let answers = quiz.questions.map { "\($0.correctIndex)" }.joined(separator: ",")
        fixture.write(#"{"op":"submit_quiz","learner":"ada","course":"\#(course.id)","answers":[\#(answers)]}"#)
        fixture.completeCourse(course, learner: "ada")
        // The quiz, one per lesson, and the course's completion.
        let received = try receiveEvents(socket, count: course.lessons.count + 2)
        let statements = try received.map { try JSONParser().parse($0.body) }
        #expect(received.allSatisfy { $0.topic == EventTopic.xapi + EventTopic.progress(course: course.id, learner: "ada") })
        let verbs = statements.compactMap { statement -> String? in
            if case .string(let id) = statement["verb"]?["id"] { return id }
            return nil
        }
        #expect(verbs.first == "http://adlnet.gov/expapi/verbs/passed")
        #expect(verbs.dropFirst().allSatisfy { $0 == "http://adlnet.gov/expapi/verbs/completed" })
        #expect(statements[0]["result"]?["score"]?["scaled"] == .double(1) && statements[0]["result"]?["success"] == true)
        #expect(statements.last?["object"]?["definition"]?["type"] == "http://adlnet.gov/expapi/activities/course")
        for statement in statements {
            #expect(statement["actor"]?["account"]?["name"] == "ada")
            guard case .string(let id) = statement["id"] else { throw TestFailure("no id") }
            #expect(UUID(uuidString: id) != nil)
        }
        #expect(Set(statements.map { $0["id"].map { "\($0)" } ?? "" }).count == statements.count, "statement ids are unique")
    }
}
