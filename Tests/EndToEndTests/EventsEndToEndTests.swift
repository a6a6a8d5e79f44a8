import Catalog
import EventSubscription
import EventPublishing
import Foundation
import LyceumTestSupport
import JSON
import Testing
import ZeroMQ

/// `lyceum serve` publishes every durable progress and book write as one event, for subscribers
/// and for `lyceum watch`.
@Suite("lyceum serve publishes progress and book events")
struct EventsEndToEndTests {
    @Test func everyProgressWriteThatChangesSomethingIsOneEventWithTheNextSequenceNumber() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        let context = try Context()
        let subscriber = try ProgressSubscriber(
            context: context, options: .init(eventsEndpoint: server.eventsEndpoint, snapshotEndpoint: server.snapshotEndpoint))
        // A heartbeat proves the subscription has reached the publisher, so no event is missed.
        let subscribed = try eventually {
            try subscriber.poll(timeout: .milliseconds(100)).contains { if case .heartbeat = $0 { true } else { false } }
        }
        try #require(subscribed, "no heartbeat on \(server.eventsEndpoint); stderr:\n\(server.process.standardError)")
        let synchronized = try subscriber.synchronize()
        guard case .synchronized(_, let start, _)? = synchronized.first else {
            Issue.record("no snapshot from \(server.snapshotEndpoint): \(synchronized)")
            return
        }

        let course = try #require(try Catalog.sample().courses.first { $0.lessons.count >= 3 })
        let head = #""learner":"ada","course":"\#(course.id)""#
        let changes = [
            #"{"op":"begin_course",\#(head)}"#,
            #"{"op":"mark_watched",\#(head),"lesson":"\#(course.lessons[0].id)"}"#,
            #"{"op":"mark_watched",\#(head),"lesson":"\#(course.lessons[1].id)"}"#,
            #"{"op":"save_position",\#(head),"lesson":"\#(course.lessons[2].id)","position_seconds":42}"#,
        ]
        for change in changes {
            #expect(try server.call("progress", change)["ok"] as? Bool == true)
        }
        // Neither a failed write nor a read is an event.
        #expect(try server.call("progress", #"{"op":"mark_watched",\#(head),"lesson":"no-such-lesson"}"#)["ok"] as? Bool == false)
        #expect(try server.call("progress", #"{"op":"get",\#(head)}"#)["ok"] as? Bool == true)

        var events: [ReceivedProgressEvent] = []
        func receive(for timeout: Duration) throws {
            for update in try subscriber.poll(timeout: timeout) {
                if case .event(let event) = update { events.append(event) }
            }
        }
        _ = try eventually {
            try receive(for: .milliseconds(100))
            return events.count >= changes.count
        }
        // A little longer, so that an extra event would be seen.
        try receive(for: .milliseconds(300))
        #expect(events.map(\.sequence) == (1...UInt64(changes.count)).map { start + $0 })
        #expect(events.map(\.type) == ["course_begun", "lesson_watched", "lesson_watched", "position_saved"])
        #expect(events.allSatisfy { $0.learner == "ada" && $0.course == course.id })
        #expect(events.last?.progress.watchedCount == 2)
        #expect(server.process.signal(SIGTERM) == 0)
    }

    @Test func everyDurableBookChangeIsAnEventOnTheLearnersBooksTopic() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        let context = try Context()
        let subscriber = try context.socket(.subscriber)
        try subscriber.set(.subscribe, to: Array("books/ines/".utf8))
        try subscriber.set(.subscribe, to: Array("hb/".utf8))
        try subscriber.connect(server.eventsEndpoint)
        // A heartbeat proves the subscription has reached the publisher, so no event is missed.
        func nextMessage(timeout: Duration) throws -> [[UInt8]]? {
            var poller = Poller()
            try poller.add(subscriber)
            guard try poller.poll(timeout: timeout) > 0 else { return nil }
            return try subscriber.receiveMultipart(options: .dontWait)
        }
        let subscribed = try eventually { try nextMessage(timeout: .milliseconds(100)) != nil }
        try #require(subscribed, "no heartbeat on \(server.eventsEndpoint)")

        let created = try server.call("books", #"{"op":"create","learner":"ines","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        let id = try #require(((created["result"] as? [String: Any])?["book"] as? [String: Any])?["id"] as? String)
        #expect(try server.call("books", #"{"op":"update","learner":"ines","id":"\#(id)","rating":4}"#)["ok"] as? Bool == true)
        // Another learner's change, a failed write and a read are no events on this prefix.
        #expect(try server.call("books", #"{"op":"create","learner":"other","title":"T","author":"A","genre":"Fantasy","rating":3}"#)["ok"] as? Bool == true)
        #expect(try server.call("books", #"{"op":"update","learner":"ines","id":"\#(id)","rating":9}"#)["ok"] as? Bool == false)
        #expect(try server.call("books", #"{"op":"get","learner":"ines","id":"\#(id)"}"#)["ok"] as? Bool == true)
        #expect(try server.call("books", #"{"op":"delete","learner":"ines","id":"\#(id)"}"#)["ok"] as? Bool == true)

        var events: [[String: Any]] = []
        func receiveBookEvent() throws {
            guard let message = try nextMessage(timeout: .milliseconds(100)), message.count == 2,
                  message[0].starts(with: Array("books/".utf8)) else { return }
            #expect(String(decoding: message[0], as: UTF8.self) == "books/ines/\(id)")
            events.append(try parse(message[1]))
        }
        _ = try eventually { try receiveBookEvent(); return events.count >= 3 }
        // A little longer once all three are in, so that an extra event would be seen.
        _ = try eventually(timeout: .milliseconds(300)) { try receiveBookEvent(); return false }
        #expect(events.map { $0["type"] as? String } == ["book_created", "book_updated", "book_deleted"])
        #expect((events.first?["book"] as? [String: Any])?["title"] as? String == "Dune")
        #expect((events.dropFirst().first?["book"] as? [String: Any])?["rating"] as? Int == 4)
        #expect(events.last?["book"] is NSNull)
        let sequences = events.compactMap { $0["seq"] as? Int }
        #expect(sequences.count == 3 && zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func watchJSONAgainstServePrintsTheEvent() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        let watch = try LyceumProcess([
            "watch", "--json", "--connect", server.eventsEndpoint, "--snapshot", server.snapshotEndpoint, "--limit", "1",
        ])
        defer { watch.stop() }
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        // The watcher may still be subscribing: positions keep changing until it has printed one.
        var seconds = 0
        let printed = try eventually { () throws -> Bool in
            seconds += 1
            let request = #"{"op":"save_position","learner":"lin","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)","position_seconds":\#(seconds)}"#
            #expect(try server.call("progress", request)["ok"] as? Bool == true)
            Thread.sleep(forTimeInterval: 0.1)
            return !watch.isRunning
        }
        try #require(printed, "watch printed nothing; stderr:\n\(watch.standardError)")
        #expect(watch.waitForExit() == 0)
        let lines = watch.standardOutput.split(separator: "\n")
        try #require(lines.count == 1, "\(watch.standardOutput)")
        let event = try ReceivedProgressEvent(topic: "", body: Array(lines[0].utf8))
        #expect(event.type == "position_saved" && event.learner == "lin" && event.course == course.id)
        #expect(server.process.signal(SIGTERM) == 0)
    }

    /// A stop signal must not wait out snapshot timeouts: heartbeats keep coming faster than a
    /// snapshot request times out, and the snapshot endpoint they advertise accepts requests
    /// and never answers (once, each heartbeat's wait made watch ignore SIGTERM for minutes).
    @Test func watchExitsOnSIGTERMWhileTheSnapshotEndpointNeverAnswers() throws {
        let context = try Context()
        let publisher = try context.socket(.publisher)
        let events = try freeLoopbackEndpoint()
        try publisher.bind(events)
        let silent = try context.socket(.router)
        let snapshot = try freeLoopbackEndpoint()
        try silent.bind(snapshot)
        let watch = try LyceumProcess(["watch", "--plain", "--no-snapshot", "--no-titles", "--connect", events])
        defer { watch.stop() }
        let heartbeat = #"{"source":"silent","seq":5,"progress_seq":5,"books_seq":0,"course_seq":{},"snapshot":"\#(snapshot)"}"#
        var requests = 0
        var signalled = false
        let ended = try eventually { () throws -> Bool in
            _ = try publisher.send(multipart: [Array("hb/".utf8), Array(heartbeat.utf8)])
            var poller = Poller()
            try poller.add(silent)
            if try poller.poll(timeout: .milliseconds(50)) > 0, try silent.receiveMultipart(options: .dontWait) != nil { requests += 1 }
            // Two requests: watch is in its heartbeat loop, waiting on a snapshot, when the signal comes.
            if requests >= 2 && !signalled {
                watch.send(SIGTERM)
                signalled = true
            }
            return signalled && !watch.isRunning
        }
        try #require(ended, "watch still ran at the hang limit (\(requests) snapshot requests, SIGTERM sent: \(signalled)); stderr:\n\(watch.standardError)")
        // The status `lyceum watch --help` documents: "0 after Ctrl-C or --limit".
        #expect(watch.exitStatus == 0, "stderr:\n\(watch.standardError)")
    }

    @Test func aProgressWorkerPublishesThroughTheBrokersForwarder() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let endpoint = try freeLoopbackEndpoint()
        let events = try freeLoopbackEndpoint()
        let forwarder = try freeLoopbackEndpoint()
        let broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", events, "--forwarder-endpoint", forwarder])
        defer { broker.stop() }
        let worker = try LyceumProcess([
            "worker", "--broker", endpoint, "--service", "progress", "--sessions", "1", "--data", data.path, "--forwarder-endpoint", forwarder,
        ])
        defer { worker.stop() }
        let context = try Context()
        let subscriber = try ProgressSubscriber(context: context, options: .init(eventsEndpoint: events, snapshotEndpoint: nil))
        // The worker's heartbeats arrive once both hops are connected and subscribed.
        let subscribed = try eventually {
            try subscriber.poll(timeout: .milliseconds(100)).contains { if case .heartbeat = $0 { true } else { false } }
        }
        try #require(subscribed, "no heartbeat through the forwarder; broker:\n\(broker.standardError)\nworker:\n\(worker.standardError)")

        let course = try #require(Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let call = try LyceumProcess.run([
            "call", "--broker", endpoint, "--timeout", "5000", "progress",
            #"{"op":"mark_watched","learner":"kim","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#,
        ])
        #expect(call.status == 0, "\(call.stderr)")
        var received: [ReceivedProgressEvent] = []
        _ = try eventually {
            for update in try subscriber.poll(timeout: .milliseconds(100)) {
                if case .event(let event) = update { received.append(event) }
            }
            return !received.isEmpty
        }
        #expect(received.map(\.type) == ["lesson_watched"])
        #expect(received.first?.sequence == 1 && received.first?.learner == "kim")
        #expect(worker.signal(SIGTERM) == 0)
        #expect(broker.signal(SIGTERM) == 0)
    }

    @Test func withEventsEndpointNoneServeAnswersWritesAndBindsNoEventPort() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        // Ports already taken: serve would exit if it still bound its publisher or snapshot socket.
        let takenEvents = try LoopbackListener()
        let takenSnapshots = try LoopbackListener()
        let server = try Deployment.serve(data: data.path, arguments: ["--events-endpoint", "none", "--snapshot-endpoint", takenSnapshots.endpoint])
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let write = #"{"op":"mark_watched","learner":"noa","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#
        #expect(try server.call("progress", write)["ok"] as? Bool == true)
        #expect(server.process.isRunning, "\(server.process.standardError)")
        #expect(!server.process.standardError.contains("publishing events"))

        let broker = try LyceumProcess([
            "broker", "--endpoint", try freeLoopbackEndpoint(), "--events-endpoint", "none", "--forwarder-endpoint", takenEvents.endpoint,
        ])
        defer { broker.stop() }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(broker.isRunning, "\(broker.standardError)")
        #expect(broker.signal(SIGTERM) == 0)
        #expect(server.process.signal(SIGTERM) == 0)
    }
}
