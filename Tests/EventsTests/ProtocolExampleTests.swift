import Events
import Foundation
import JSON
import Testing

@Suite("protocol/events.md examples and schemas")
struct ProtocolExampleTests {
    static let protocolDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../protocol").standardized

    static func load(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: protocolDirectory.appendingPathComponent(path)))
    }

    /// The `required` members of a schema, at the top level.
    static func required(_ schema: String) throws -> [String] {
        guard case .array(let names) = try JSONParser().parse(try load("schemas/" + schema))["required"] else { throw TestFailure("\(schema) has no required list") }
        return names.compactMap { if case .string(let name) = $0 { name } else { nil } }
    }

    @Test("each example decodes as the subscriber decodes it and has its schema's required members", arguments: [
        ("event-examples/progress.lesson_watched.json", "events.progress.json"),
        ("event-examples/progress.quiz_submitted.json", "events.progress.json"),
        ("event-examples/heartbeat.json", "events.heartbeat.json"),
        ("event-examples/snapshot.json", "events.snapshot.json"),
        ("event-examples/snapshot.error.json", "events.snapshot_error.json"),
        ("event-examples/xapi.passed.json", "events.xapi.json"),
    ])
    func example(path: String, schema: String) throws {
        let bytes = try Self.load(path)
        guard case .object(let object) = try JSONParser().parse(bytes) else { throw TestFailure("\(path) is not an object") }
        for name in try Self.required(schema) { #expect(object[name] != nil, "\(path) lacks \(name)") }
        switch schema {
        case "events.progress.json": _ = try ReceivedProgressEvent(topic: "progress/python-for-data/ada", body: bytes)
        case "events.heartbeat.json": _ = try ReceivedHeartbeat(body: bytes)
        case "events.snapshot.json": #expect(try ReceivedSnapshot(body: bytes).entries.count == 2)
        default: break
        }
    }

    @Test("published events have exactly the members the progress schema names")
    func publishedMembers() throws {
        let fixture = try PublishingFixture()
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.progress])
        let course = fixture.catalog.courses[0]
        fixture.write(#"{"op":"mark_watched","learner":"ada","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#)
        let received = try receiveEvents(socket, count: 1)
        guard case .object(let object) = try JSONParser().parse(received[0].body) else { throw TestFailure("not an object") }
        #expect(object.members.map(\.key).sorted() == (try Self.required("events.progress.json")).sorted())
    }
}
