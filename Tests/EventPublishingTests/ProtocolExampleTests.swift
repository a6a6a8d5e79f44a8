import Books
import EventSubscription
import EventPublishing
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
        ("event-examples/books.book_updated.json", "events.book.json"),
        ("event-examples/books.book_deleted.json", "events.book.json"),
    ])
    func example(path: String, schema: String) throws {
        let bytes = try Self.load(path)
        guard case .object(let object) = try JSONParser().parse(bytes) else { throw TestFailure("\(path) is not an object") }
        for name in try Self.required(schema) { #expect(object[name] != nil, "\(path) lacks \(name)") }
        switch schema {
        case "events.progress.json": _ = try ReceivedProgressEvent(topic: "progress/python-for-data/ada", body: bytes)
        case "events.heartbeat.json": _ = try ReceivedHeartbeat(body: bytes)
        case "events.snapshot.json": #expect(try ReceivedSnapshot(body: bytes).entries.count == 2)
        case "events.book.json":
            let event = try ReceivedBookEvent(topic: "books/ada/00000000-0000-4000-8000-000000000001", body: bytes)
            #expect((event.book == nil) == (event.type == "book_deleted"))
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

    @Test("published book events have exactly the members the book schema names, and their book those of a books result")
    func publishedBookMembers() throws {
        let fixture = try PublishingFixture()
        let socket = try subscribedSocket(fixture.context, to: fixture.endpoints.publish[0], prefixes: [EventTopic.books])
        let book = Book(
            id: "00000000-0000-4000-8000-000000000001", learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5,
            review: "", version: 1, createdAt: 0, updatedAt: 0)
        fixture.publisher.publish(BookEvent(kind: .created, learner: "ada", bookID: book.id, book: book), on: .books, revision: 1)
        let received = try receiveEvents(socket, count: 1)
        guard case .object(let object) = try JSONParser().parse(received[0].body), case .object(let published) = object["book"] else {
            throw TestFailure("not an object with a book")
        }
        #expect(object.members.map(\.key).sorted() == (try Self.required("events.book.json")).sorted())
        guard case .array(let names) = try JSONParser().parse(try Self.load("schemas/common.json"))["$defs"]?["book"]?["required"] else {
            throw TestFailure("common.json has no book definition")
        }
        #expect(published.members.map { JSONValue.string($0.key) }.sorted { "\($0)" < "\($1)" } == names.sorted { "\($0)" < "\($1)" })
    }
}
