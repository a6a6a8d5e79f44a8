import Access
import Catalog
import JSON
import Journal
import LyceumLogging
import LyceumSupport
import Partitions
import Progress

/// The `progress` service: each learner's progress through the catalog's courses.
/// Operations: `mark_watched`, `mark_unwatched`, `save_position`, `begin_course`, `open_lesson`,
/// `submit_quiz`, `get`, `list`, `course_stats`; see `protocol/README.md`.
public final class ProgressService: JournaledService {
    /// The Majordomo service name.
    public static let serviceName = "progress"
    /// The most records one `list` page holds, whatever the byte budget leaves room for.
    public static let maxListPage = 1_000
    /// `progress`.
    public var name: String { Self.serviceName }

    private let core: ServiceCore<ProgressState>
    private let store: CatalogStore
    private let environment: ServiceEnvironment
    private let budget: ReplyBudget
    private let partition: OwnedPartition?

    /// A service over `state` (replayed from the journal) that checks references against the
    /// catalog in `catalog`, commits writes to `log` and cuts `list` pages at `budget`; with
    /// `partition`, it serves only that partition's learners and refuses any other with
    /// `bad_request` (`$.learner`) before reading or writing anything (`course_stats`, which
    /// names no learner, covers the learners of that partition).
    public init(
        state: ProgressState = ProgressState(), catalog: CatalogStore, log: any ChangeLog, environment: ServiceEnvironment = .live,
        budget: ReplyBudget = .standard, partition: OwnedPartition? = nil
    ) {
        core = ServiceCore(state: state, log: log, now: environment.ledgerClock)
        store = catalog
        self.environment = environment
        self.budget = budget
        self.partition = partition
    }

    /// A copy of the state including every applied write, e.g. for a journal compaction's
    /// `snapshot()`. O(1) now; the next write copies the top-level tables once. Do not call it
    /// from inside `ChangeLog.append`, which runs under the service's lock.
    public var currentState: ProgressState { core.currentState }

    /// The state together with the log's last sequence number (`lastSequence()`, read under the
    /// service's write lock), both reflecting exactly the same writes: a journal compaction's
    /// capture. Throws when a journaled write could not be applied, which the state would miss.
    /// Do not call it from inside `ChangeLog.append`.
    public func captureState(lastSequence: () -> UInt64) throws(UndecodableValue) -> (state: ProgressState, sequence: UInt64) {
        try core.capture(sequence: lastSequence)
    }

    /// The reply frame, and for a write that changed something, the event to publish, waiting
    /// for both: for tests and callers that spend a thread per request.
    public func handleWithEvent(_ frame: [UInt8], caller: Caller = .unverified) -> (reply: [UInt8], event: ProgressEvent?) {
        let handled = handleWithCommit(frame, caller: caller)
        return (handled.reply, handled.event)
    }

    /// Calls `completion` exactly once with the reply frame and, for a write that changed
    /// something, the event to publish with the ticket of the journal record that stored it. A
    /// write completes only once it is durable (possibly later, on the change log's thread), so an
    /// event is never handed out for a write that failed or could still be lost. Reads, refused
    /// requests and writes that change nothing carry no event. Ticket sequences follow the order
    /// writes were applied in, so they order the events of one learner in one course even when
    /// threads publish them in another order. Writes, `get` and `list` need a caller that may act
    /// for the request's learner, `course_stats` one whose role may perform trusted operations;
    /// any other gets `forbidden` before the records are read.
    public func handleWithCommit(_ frame: [UInt8], caller: Caller, completion: @escaping @Sendable (HandledRequest<ProgressEvent>) -> Void) {
        guard var request = Request.parsed(frame, answeringErrorsWith: completion) else { return }
        do throws(ServiceError) {
            let catalog = store.catalog
            switch request.op {
            case "mark_watched":
                try write(&request, catalog, caller, completion) { (reader) throws(JSONReadError) in .watch(lesson: try reader.id("lesson")) }
            case "mark_unwatched":
                try write(&request, catalog, caller, completion) { (reader) throws(JSONReadError) in .unwatch(lesson: try reader.id("lesson")) }
            case "save_position":
                try write(&request, catalog, caller, completion) { (reader) throws(JSONReadError) in
                    .savePosition(
                        lesson: try reader.id("lesson"),
                        seconds: try reader.double("position_seconds", in: 0...ProgressAction.maxPositionSeconds))
                }
            case "begin_course": try write(&request, catalog, caller, completion) { (_) throws(JSONReadError) in .begin }
            case "open_lesson":
                try write(&request, catalog, caller, completion) { (reader) throws(JSONReadError) in .open(lesson: try reader.id("lesson")) }
            case "submit_quiz":
                try write(&request, catalog, caller, completion) { (reader) throws(JSONReadError) in .submitQuiz(answers: try reader.answers()) }
            case "get", "list", "course_stats", CourseStatisticsFanOut.partialOp:
                try request.refuseRequestID()
                switch request.op {
                case "get": completion(HandledRequest(reply: try get(&request, catalog, caller), to: request))
                case "list": completion(HandledRequest(reply: try list(&request, catalog, caller), to: request))
                case "course_stats":
                    completion(HandledRequest(reply: Reply.success(try courseStatistics(&request, catalog, caller).json), to: request))
                default:
                    completion(HandledRequest(reply: Reply.success(try courseStatistics(&request, catalog, caller).partialJSON), to: request))
                }
            default:
                throw ServiceError(
                    .unknownOp,
                    "progress has no operation \(PeerText.excerpt(request.op)); it has mark_watched, mark_unwatched, save_position, begin_course, open_lesson, submit_quiz, get, list, course_stats",
                    field: "$.op")
            }
        } catch {
            completion(HandledRequest(error, to: request))
        }
    }

    /// Reads the request and hands the write to `ServiceCore.write`, which calls `completion`;
    /// throws (without calling it) only while reading the request.
    private func write(
        _ request: inout Request, _ catalog: Catalog, _ caller: Caller, _ completion: @escaping @Sendable (HandledRequest<ProgressEvent>) -> Void,
        action readAction: (inout JSONObjectReader) throws(JSONReadError) -> ProgressAction
    ) throws(ServiceError) {
        let (learner, courseID, action) = try request.read { (reader) throws(JSONReadError) in
            (try reader.learner(in: partition), try reader.id("course"), try readAction(&reader))
        }
        try caller.authorize(actingFor: learner)
        let course = try catalog.existingCourse(courseID)
        let now = environment.now()
        core.write(request, learner: learner, plan: { (state) throws(ServiceError) -> WritePlan<ProgressState, ProgressEvent> in
            let outcome: ProgressOutcome
            do throws(ProgressError) {
                outcome = try state.records.plan(action, by: learner, in: course, now: now)
            } catch {
                let field = "$." + error.field
                switch error.code {
                case .notFound: throw ServiceError(.notFound, error.message, field: field)
                case .invalidField: throw ServiceError(.badRequest, "\(field) \(error.message)", field: field)
                }
            }
            var result = JSONObjectWriter()
            if let attempt = outcome.attempt {
                result.member("score", attempt.score)
                result.member("total", attempt.total)
                result.member("wrong", strings: attempt.wrong)
            }
            result.member("progress") { outcome.summary.writeJSON(into: &$0) }
            let record = outcome.progress
            return WritePlan(
                reply: Reply.success(serialized: result.finish()), changes: outcome.change.map { [$0] } ?? [], event: outcome.event,
                perform: outcome.change == nil ? nil : { (state) in state.store(record) })
        }, completion: completion)
    }

    private func get(_ request: inout Request, _ catalog: Catalog, _ caller: Caller) throws(ServiceError) -> [UInt8] {
        let (learner, courseID) = try request.read { (reader) throws(JSONReadError) in (try reader.learner(in: partition), try reader.id("course")) }
        try caller.authorize(actingFor: learner)
        let course = try catalog.existingCourse(courseID)
        let record = try core.read { (state) throws(ServiceError) in state.records.progress(of: learner, in: course.id) }
        let progress = record ?? CourseProgress(learner: learner, course: course.id, startedAt: 0, updatedAt: 0)
        let summary = ProgressSummary(progress, lessonIDs: course.lessons.map(\.id))
        let positions = course.lessons.compactMap { lesson in
            progress.positions[lesson.id].map { ["lesson": .string(lesson.id), "seconds": .double($0)] as JSONValue }
        }
        let detail: JSONValue = [
            "learner": .string(learner), "course": .string(course.id), "started": .bool(record != nil),
            "watched": .array(course.lessons.map(\.id).filter(progress.watched.contains).map(JSONValue.string)),
            "watched_count": .integer(summary.watchedCount), "lesson_count": .integer(summary.lessonCount),
            "percent": .integer(summary.percent), "current_lesson": JSONValue(progress.currentLesson),
            "completed": .bool(summary.completed), "positions": .array(positions),
            "best_attempt": progress.bestAttempt?.json ?? .null, "latest_attempt": progress.latestAttempt?.json ?? .null,
            "started_at": record.map { .string(RFC3339.string(millisecondsSince1970: $0.startedAt)) } ?? .null,
            "updated_at": record.map { .string(RFC3339.string(millisecondsSince1970: $0.updatedAt)) } ?? .null,
        ]
        return Reply.success(["progress": detail])
    }

    private func list(_ request: inout Request, _ catalog: Catalog, _ caller: Caller) throws(ServiceError) -> [UInt8] {
        let (learner, cursor) = try request.read { (reader) throws(JSONReadError) in
            (try reader.learner(in: partition), try reader.optionalString("cursor", length: 1...1024))
        }
        try caller.authorize(actingFor: learner)
        let after = try cursor.map { (cursor) throws(ServiceError) in
            guard let parts = PageCursor.decode(cursor), parts.count == 2, case .integer(let updatedAt) = parts[0],
                case .string(let course) = parts[1]
            else { throw ServiceError(.badRequest, "$.cursor is not a cursor of this listing", field: "$.cursor") }
            return (updatedAt: Int64(updatedAt), course: course)
        }
        // One more than a page holds, to know whether another follows: the page costs a seek and
        // `maxListPage` records however many courses the learner started (issue 40).
        let fetched = try core.read { (state) throws(ServiceError) in
            state.records.courses(of: learner, after: after, limit: Self.maxListPage + 1)
        }
        let records = fetched.prefix(Self.maxListPage)
        var output: [UInt8] = Array(#"{"learner":"#.utf8)
        JSONValue.write(learner, to: &output)
        output.append(utf8: #","courses":["#)
        let written = budget.writeItems(records, to: &output) { record, output in
            let summary = ProgressSummary(record, lessonIDs: catalog.course(record.course)?.lessons.map(\.id) ?? [])
            JSONObjectWriter.append(to: &output) { summary.writeJSON(into: &$0) }
        }
        let last = written < fetched.count ? records[written - 1] : nil
        output.append(utf8: #"],"next_cursor":"#)
        JSONValue(last.map { PageCursor.encode([.integer(Int($0.updatedAt)), .string($0.course)]) }).write(to: &output)
        output.append(UInt8(ascii: "}"))
        return Reply.success(serialized: output)
    }

    /// The figures of the course a `course_stats` (or, in a partition, `course_stats_partial`)
    /// request names, for a caller that may perform trusted operations.
    private func courseStatistics(
        _ request: inout Request, _ catalog: Catalog, _ caller: Caller
    ) throws(ServiceError) -> CourseStatisticsFanOut.Figures {
        let courseID = try CourseStatisticsFanOut.course(of: &request, caller: caller)
        let course = try catalog.existingCourse(courseID)
        let statistics = try core.read { (state) throws(ServiceError) in state.records.statistics(of: course.id) }
        return CourseStatisticsFanOut.Figures(course: course.id, statistics: statistics)
    }
}

extension JSONObjectReader {
    /// The required `answers` member: an array of answer indexes.
    mutating func answers() throws(JSONReadError) -> [Int] {
        var answers: [Int] = []
        for item in try array("answers") {
            guard case .integer(let answer) = item.value else {
                throw JSONReadError(path: item.path, message: "expected an integer, found \(item.value.typeName)")
            }
            answers.append(answer)
        }
        return answers
    }
}
