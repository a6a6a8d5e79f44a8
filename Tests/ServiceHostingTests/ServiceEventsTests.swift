import Configuration
import Access
import EventSubscription
import EventPublishing
import Foundation
import JSON
import Journal
import LearningServices
import LyceumLifecycle
import LyceumServer
import LyceumTestSupport
import Majordomo
@testable import ServiceHosting
import Testing
import ZeroMQ

/// A note a learner added, the event of the test-only `test.notes` service.
private struct NoteAdded: Sendable {
    let learner: String
    let text: String
}

/// The notes the journal replays: learner → `{"text": …}`.
private struct NotesState: JournalState {
    var notes: [String: [UInt8]] = [:]

    mutating func apply(_ change: JournalChange) throws(UndecodableValue) { notes[change.key] = change.value }

    func snapshot() -> [JournalChange] { notes.map { .put("notes", key: $0.key, value: $0.value) } }
}

/// A journaled service that exists only in this test target: `add` stores a learner's note and,
/// once durable, completes with a `NoteAdded` event and the journal's ticket.
private final class NotesService: JournaledService {
    static let serviceName = "test.notes"
    let log: any ChangeLog
    var name: String { Self.serviceName }

    init(log: any ChangeLog) { self.log = log }

    func handleWithCommit(_ frame: [UInt8], caller: Caller, completion: @escaping @Sendable (HandledRequest<NoteAdded>) -> Void) {
        guard var request = try? Request(frame), request.op == "add",
              let (learner, text) = try? request.read({ (reader) throws(JSONReadError) in (try reader.string("learner"), try reader.string("text")) })
        else {
            let error = ServiceError(.unknownOp, "test.notes has only add", field: "$.op")
            return completion(HandledRequest(reply: error.replyFrame, op: nil, errorCode: error.code))
        }
        let ticket: CommitTicket
        do {
            ticket = try log.append([.put("notes", key: learner, value: (["text": .string(text)] as JSONValue).serialized())])
        } catch {
            let refusal = ServiceError(.unavailable, "\(error)")
            return completion(HandledRequest(reply: refusal.replyFrame, op: "add", errorCode: refusal.code))
        }
        log.whenDurable(ticket) { _ in
            completion(HandledRequest(
                reply: Array(#"{"ok":true,"result":{}}"#.utf8), event: NoteAdded(learner: learner, text: text), commit: ticket, op: "add"))
        }
    }

    func captureState(lastSequence: () -> UInt64) throws(UndecodableValue) -> (state: NotesState, sequence: UInt64) {
        (NotesState(), lastSequence())
    }
}

struct ServiceEventsTests {
    /// The test service's events: a topic and an encoder, and nothing in the Events module.
    private static let stream = EventStream<NoteAdded>(
        name: "notes", topic: { "notes/" + EventTopic.escape($0.learner) },
        encode: { event, stamp, source in
            Array(#"{"seq":\#(stamp.sequence),"notes_seq":\#(stamp.streamSequence),"revision":\#(stamp.revision),"source":"\#(source)","text":"\#(event.text)"}"#.utf8)
        })

    /// The one registration of the test-only service, events included.
    private static let registry = ServiceRegistry.standard.adding(.journaled(
        NotesService.serviceName, state: { NotesState() }, make: { _, log, _ in NotesService(log: log) },
        events: ServiceEvents(stream: stream)))

    @Test func aServiceRegisteredWithEventsPublishesOnItsTopicAndHeartbeatsCountIt() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        settings.endpoints = [try freeLoopbackEndpoint()]
        settings.eventsEndpoint = try freeLoopbackEndpoint()
        settings.snapshotEndpoint = try freeLoopbackEndpoint()
        let host = try ServiceHost(serving: [NotesService.serviceName], registry: Self.registry, settings: settings.hosting)
        defer { host.close() }
        let threads = try serveInProcess(host, settings: settings)
        defer { for thread in threads.reversed() { _ = thread.stop() } }

        let context = try Context()
        let subscriber = try context.socket(.subscriber)
        defer { subscriber.close() }
        try subscriber.set(.subscribe, to: Array("notes/".utf8))
        try subscriber.set(.subscribe, to: Array("hb/".utf8))
        try subscriber.connect(settings.eventsEndpoint)
        func nextMessage(timeout: Duration) throws -> [[UInt8]]? {
            var poller = Poller()
            try poller.add(subscriber)
            guard try poller.poll(timeout: timeout) > 0 else { return nil }
            return try subscriber.receiveMultipart(options: .dontWait)
        }
        // A heartbeat proves the subscription has reached the publisher, so no event is missed.
        try #require(try eventually { try nextMessage(timeout: .milliseconds(100)) != nil }, "no heartbeat")

        let client = Client(
            endpoint: settings.endpoints[0], configuration: ClientConfiguration(timeout: .seconds(10), attempts: 1), context: context)
        defer { client.close() }
        let reply = try client.call(NotesService.serviceName, body: [Array(#"{"op":"add","learner":"ada/x","text":"hello"}"#.utf8)])
        #expect(try parse(#require(reply.first))["ok"] as? Bool == true, "\(String(decoding: reply.first ?? [], as: UTF8.self))")

        var event: [[UInt8]]?
        var heartbeat: [String: Any]?
        _ = try eventually {
            if let message = try nextMessage(timeout: .milliseconds(100)), message.count == 2 {
                if message[0] == Array("hb/".utf8) { heartbeat = try parse(message[1]) } else { event = message }
            }
            return event != nil && heartbeat?["notes_seq"] as? Int == 1
        }
        let published = try #require(event, "no event on notes/")
        #expect(String(decoding: published[0], as: UTF8.self) == "notes/ada%2Fx")
        let body = try parse(published[1])
        #expect(body["seq"] as? Int == 1 && body["notes_seq"] as? Int == 1 && body["revision"] as? Int == 1)
        #expect(body["text"] as? String == "hello")
        // Every stream of the registry is numbered, the standard ones included, whichever this host serves.
        let announced = try #require(heartbeat, "no heartbeat after the event")
        #expect(announced["seq"] as? Int == 1 && announced["notes_seq"] as? Int == 1)
        #expect(announced["progress_seq"] as? Int == 0 && announced["books_seq"] as? Int == 0)
    }
}
