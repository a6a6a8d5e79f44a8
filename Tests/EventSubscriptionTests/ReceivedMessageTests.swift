import EventSubscription
import Foundation
import Testing

/// What a subscriber decodes, from protocol/events.md's examples (`protocol/event-examples/`),
/// and the typed error, naming the topic and field, that a damaged message gets instead.
@Suite struct ReceivedMessageTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../protocol/event-examples").standardized

    static func example(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: examples.appendingPathComponent(name)))
    }

    /// `body` (a JSON object) with `change` applied to its members.
    static func changed(_ body: [UInt8], _ change: (inout [String: Any]) -> Void) throws -> [UInt8] {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        change(&object)
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    @Test func theDocumentedProgressEventDecodes() throws {
        let topic = "progress/swift-basics/ada"
        let event = try ReceivedProgressEvent(topic: topic, body: try Self.example("progress.lesson_watched.json"))
        #expect(event.topic == topic && event.type == "lesson_watched" && event.learner == "ada")
        #expect(event.progress.course == event.course && (0...100).contains(event.progress.percent))
        #expect(event.sequence >= event.progressSequence && event.courseSequence > 0)
    }

    @Test func theDocumentedHeartbeatDecodes() throws {
        let heartbeat = try ReceivedHeartbeat(body: try Self.example("heartbeat.json"))
        #expect(!heartbeat.source.isEmpty && heartbeat.sequence >= heartbeat.progressSequence)
    }

    @Test(arguments: [
        ("progress", "missing"), ("seq", "missing"), ("seq", "negative"), ("learner", "a number"), ("completes_course", "a string"),
    ])
    func aDamagedProgressEventIsMalformedNamingTheTopicAndField(field: String, damage: String) throws {
        let topic = "progress/swift-basics/ada"
        let body = try Self.changed(try Self.example("progress.lesson_watched.json")) { object in
            switch damage {
            case "missing": object[field] = nil
            case "negative": object[field] = -1
            case "a number": object[field] = 7
            default: object[field] = "yes"
            }
        }
        let error = try #require(throws: EventsError.self) { try ReceivedProgressEvent(topic: topic, body: body) }
        #expect(error.code == .malformed && error.detail.contains(topic) && error.detail.contains(field), "\(error)")
    }

    @Test(arguments: ["not Z85 at all", String(repeating: "a", count: 39)])
    func aHeartbeatWhoseSnapshotKeyIsNoCurveKeyIsMalformed(key: String) throws {
        let body = try Self.changed(try Self.example("heartbeat.json")) { $0["snapshot_key"] = key }
        let error = try #require(throws: EventsError.self) { try ReceivedHeartbeat(body: body) }
        #expect(error.code == .malformed && error.detail.contains("snapshot_key"), "\(error)")
    }

    @Test func bytesThatAreNoJSONObjectAreMalformedNotACrash() throws {
        for body in [[], Array("[1,2]".utf8), Array("{\"seq\":".utf8), [0xff, 0xfe]] as [[UInt8]] {
            #expect(throws: EventsError.self) { try ReceivedHeartbeat(body: body) }
            #expect(throws: EventsError.self) { try ReceivedProgressEvent(topic: "progress/c/l", body: body) }
        }
    }
}

/// Topics: one segment per id, whatever the id holds, so that a prefix subscription selects
/// exactly one course's or one learner's events.
@Suite struct EventTopicTests {
    @Test func idsHoldingSlashesOrPercentsStayOneSegment() {
        #expect(EventTopic.escape("plain-id") == "plain-id")
        #expect(EventTopic.escape("a/b%c") == "a%2Fb%25c")
        #expect(EventTopic.progress(course: "swift/101", learner: "ada%") == "progress/swift%2F101/ada%25")
        #expect(EventTopic.book(learner: "ada/x", bookID: "b1") == "books/ada%2Fx/b1")
    }

    @Test func aPrefixSelectsOneCourseOrLearnerAndNoOtherWhoseIdItBegins() {
        let prefix = EventTopic.progressPrefix(course: "swift")
        #expect(EventTopic.progress(course: "swift", learner: "ada").hasPrefix(prefix))
        #expect(!EventTopic.progress(course: "swift-advanced", learner: "ada").hasPrefix(prefix))
        #expect(!EventTopic.progress(course: "swift/x", learner: "ada").hasPrefix(prefix))
        #expect(EventTopic.progressPrefix(course: nil) == EventTopic.progress)
        let books = EventTopic.booksPrefix(learner: "ada")
        #expect(EventTopic.book(learner: "ada", bookID: "1").hasPrefix(books) && !EventTopic.book(learner: "adam", bookID: "1").hasPrefix(books))
        #expect(EventTopic.booksPrefix(learner: nil) == EventTopic.books)
    }
}
