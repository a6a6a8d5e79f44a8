import Catalog
import EventSubscription
import EventPublishing
import Foundation
import JSON
import LearningServices
import LearningServicesTestSupport
import LyceumLifecycle
import LyceumTestSupport
import Progress
import Testing
import ZeroMQ

/// A progress service over the sample catalog and an in-memory log, whose durable writes are
/// published the way `lyceum serve` publishes them.
final class PublishingFixture: @unchecked Sendable {
    let catalog: Catalog
    let service: ProgressService
    let context: Context
    let publisher: EventPublisher
    let endpoints: EventPublisher.BoundEndpoints
    private let thread: ComponentThread

    init(
        context: Context? = nil, sendHighWaterMark: Int32 = 10_000, heartbeat: Duration = .milliseconds(100),
        forwarder: String? = nil, queueCapacity: Int = 100_000
    ) throws {
        catalog = try Catalog.sample()
        service = ProgressService(catalog: CatalogStore(catalog), log: InMemoryChangeLog())
        let context = try context ?? Context()
        self.context = context
        let configuration = EventPublisherConfiguration(
            publishEndpoints: forwarder == nil ? ["tcp://127.0.0.1:*"] : [], forwarderEndpoints: forwarder.map { [$0] } ?? [],
            snapshotEndpoints: ["tcp://127.0.0.1:*"], sendHighWaterMark: sendHighWaterMark, queueCapacity: queueCapacity,
            heartbeatInterval: heartbeat)
        publisher = try EventPublisher(configuration: configuration, context: context, streams: [EventStream.progress, EventStream.books])
        thread = ComponentThread(publisher, name: "publisher")
        endpoints = try publisher.waitUntilBound()
    }

    deinit { thread.stop() }

    /// Handles `request` as a worker would and publishes its event, if any.
    @discardableResult
    func write(_ request: String) -> ProgressEvent? {
        let handled = service.handleWithCommit(Array(request.utf8))
        if let event = handled.event, let commit = handled.commit { publisher.publish(event, on: .progress, revision: commit.sequence) }
        return handled.event
    }

    /// A mix of every write operation by `learners` over the sample courses, some of which change
    /// nothing (repeats) and some of which fail (unknown lessons).
    func requests(count: Int, learners: [String], seed: Int = 0) -> [String] {
        let courses = catalog.courses.filter { !$0.lessons.isEmpty }
        return (0..<count).map { index in
            let step = index &* 7919 &+ seed
            let learner = learners[step % learners.count]
            let course = courses[(step / 3) % courses.count]
            let lesson = course.lessons[(step / 5) % course.lessons.count].id
            let head = #"{"learner":"\#(learner)","course":"\#(course.id)""#
            switch step % 9 {
            case 0: return head + #","op":"begin_course"}"#
            case 1: return head + #","op":"open_lesson","lesson":"\#(lesson)"}"#
            case 2: return head + #","op":"save_position","lesson":"\#(lesson)","position_seconds":\#(index % 600)}"#
            case 3:
                guard let quiz = course.quiz else { return head + #","op":"mark_watched","lesson":"\#(lesson)"}"# }
                let answers = quiz.questions.enumerated().map { "\($0.offset % 3 == step % 2 ? $0.element.correctIndex : 0)" }
                return head + #","op":"submit_quiz","answers":[\#(answers.joined(separator: ","))]}"#
            case 4: return head + #","op":"mark_unwatched","lesson":"\#(lesson)"}"#
            case 5: return head + #","op":"mark_watched","lesson":"no-such-lesson"}"#
            default: return head + #","op":"mark_watched","lesson":"\#(lesson)"}"#
            }
        }
    }

    /// Polls `subscriber` until a heartbeat announces the publisher's last sequence number:
    /// heartbeats carry it, so once one shows nothing newer the mirror is complete.
    /// - Throws: `TestFailure` when that takes over 15 s.
    func catchUp(_ subscriber: ProgressSubscriber) throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            for update in try subscriber.poll(timeout: .milliseconds(100)) {
                if case .heartbeat(let heartbeat) = update, heartbeat.sequence == publisher.sequence { return }
            }
        }
        throw TestFailure("never caught up with sequence \(publisher.sequence)")
    }

    /// Every lesson of `course` watched by `learner`, completing it.
    func completeCourse(_ course: Course, learner: String) {
        for lesson in course.lessons { write(#"{"op":"mark_watched","learner":"\#(learner)","course":"\#(course.id)","lesson":"\#(lesson.id)"}"#) }
    }

    /// The service's answer to `list` for every learner with progress, as published summaries by topic.
    func progressThroughTheService() throws -> [String: PublishedProgressFields] {
        var result: [String: PublishedProgressFields] = [:]
        let table = ProgressTable(records: service.currentState.records) { [catalog] in catalog.course($0)?.lessons.map(\.id) ?? [] }
        for learner in Set(table.entries(matching: EventTopic.progress).map(\.entry.learner)) {
            let reply = try JSONParser().parse(service.handle(Array(#"{"op":"list","learner":"\#(learner)"}"#.utf8)))
            guard case .array(let courses) = reply["result"]?["courses"] else { throw TestFailure("list for \(learner): \(reply)") }
            for course in courses {
                let fields = try PublishedProgressFields(course)
                result[EventTopic.progress(course: fields.course, learner: learner)] = fields
            }
        }
        return result
    }
}

/// The fields of a published progress summary, comparable with the service's JSON.
struct PublishedProgressFields: Equatable, CustomStringConvertible {
    let course: String
    let watchedCount: Int
    let lessonCount: Int
    let percent: Int
    let currentLesson: String?
    let completed: Bool
    let bestScore: [Int]?
    let updatedAt: String

    init(_ progress: PublishedProgress) {
        course = progress.course
        watchedCount = progress.watchedCount
        lessonCount = progress.lessonCount
        percent = progress.percent
        currentLesson = progress.currentLesson
        completed = progress.completed
        bestScore = progress.bestScore.map { [$0.score, $0.total] }
        updatedAt = progress.updatedAt
    }

    init(_ json: JSONValue) throws {
        guard case .string(let course) = json["course"], case .integer(let watched) = json["watched_count"],
            case .integer(let lessons) = json["lesson_count"], case .integer(let percent) = json["percent"],
            case .bool(let completed) = json["completed"], case .string(let updated) = json["updated_at"]
        else { throw TestFailure("not a progress summary: \(json)") }
        self.course = course
        watchedCount = watched
        lessonCount = lessons
        self.percent = percent
        if case .string(let lesson) = json["current_lesson"] { currentLesson = lesson } else { currentLesson = nil }
        self.completed = completed
        if case .integer(let score) = json["best_score"]?["score"], case .integer(let total) = json["best_score"]?["total"] {
            bestScore = [score, total]
        } else {
            bestScore = nil
        }
        updatedAt = updated
    }

    var description: String { "\(course) \(watchedCount)/\(lessonCount) \(percent)% current=\(currentLesson ?? "-") completed=\(completed) best=\(bestScore ?? []) at \(updatedAt)" }
}

/// A failed expectation that carries its own message.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A raw SUB socket, used on one thread: it subscribes to `prefixes` and returns once a
/// heartbeat proves the subscription reached the publisher.
func subscribedSocket(_ context: Context, to endpoint: String, prefixes: [String], receiveHighWaterMark: Int32 = 100_000) throws -> Socket {
    let socket = try context.socket(.subscriber)
    try socket.set(.receiveHighWaterMark, to: receiveHighWaterMark)
    for prefix in prefixes + [EventTopic.heartbeat] { try socket.set(.subscribe, to: Array(prefix.utf8)) }
    try socket.set(.receiveTimeout, to: 5000)
    try socket.connect(endpoint)
    while let frames = try socket.receiveMultipart() {
        if frames.first == Array(EventTopic.heartbeat.utf8) { return socket }
    }
    throw TestFailure("no heartbeat from \(endpoint)")
}

/// Receives progress messages (skipping heartbeats) until `count` arrived; throws after 5 s of silence.
func receiveEvents(_ socket: Socket, count: Int) throws -> [(topic: String, body: [UInt8])] {
    var events: [(topic: String, body: [UInt8])] = []
    while events.count < count {
        guard let frames = try socket.receiveMultipart() else { throw TestFailure("only \(events.count) of \(count) events arrived") }
        #expect(frames.count == 2)
        let topic = String(decoding: frames[0], as: UTF8.self)
        if topic != EventTopic.heartbeat { events.append((topic, frames[1])) }
    }
    return events
}
