import Foundation
@testable import EventSubscription
@testable import ProgressWatch
import Testing

/// `lyceum watch`'s screen and lines, from events decoded as a subscriber receives them
/// (protocol/event-examples/): what a person at the terminal reads.
@Suite struct WatchDashboardTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../protocol/event-examples/progress.lesson_watched.json").standardized

    /// The documented event, its learner, course and sequence number replaced.
    static func event(learner: String = "ada", course: String = "python-for-data", sequence: Int = 42) throws -> ReceivedProgressEvent {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: example)) as? [String: Any])
        object["learner"] = learner
        object["course"] = course
        object["seq"] = sequence
        var progress = try #require(object["progress"] as? [String: Any])
        progress["course"] = course
        object["progress"] = progress
        return try ReceivedProgressEvent(topic: EventTopic.progress(course: course, learner: learner),
                                         body: Array(try JSONSerialization.data(withJSONObject: object)))
    }

    static func entry(_ event: ReceivedProgressEvent) -> ProgressSubscriber.Entry {
        ProgressSubscriber.Entry(learner: event.learner, course: event.course, source: event.source, revision: event.revision, progress: event.progress)
    }

    @Test func anEventsLineNamesWhoWhatWhereAndItsSequence() throws {
        let line = WatchDashboard.line(for: try Self.event())
        for part in ["lesson_watched", "learner=ada", "course=python-for-data", "lesson=pandas-basics", "percent=100", "COMPLETED", "seq=42"] {
            #expect(line.contains(part), "\(line) lacks \(part)")
        }
    }

    @Test func theScreenFitsItsRowsNewestEventFirstAndWarningsFitTheWidth() throws {
        var dashboard = WatchDashboard(endpoint: "tcp://127.0.0.1:5556", learner: nil)
        for sequence in 1...50 { dashboard.add(try Self.event(sequence: sequence)) }
        dashboard.warn(String(repeating: "gap ", count: 100))
        let lines = dashboard.render([Self.entry(try Self.event())], columns: 80, rows: 24)
        #expect(lines.count <= 24, "\(lines.count) lines on 24 rows")
        #expect(lines[0].contains("1 learners") && lines[0].contains("50 events"), "\(lines[0])")
        // The warning, cut before its escapes, never wraps.
        #expect(lines[1].replacingOccurrences(of: "\u{1B}[7m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "").count <= 80, "\(lines[1])")
        let feed = lines.drop { $0 != "RECENT EVENTS" }.dropFirst()
        #expect(feed.first?.hasSuffix("seq=50") == true, "newest first: \(feed.first ?? "")")
    }

    @Test func coursesBeyondTheRoomAreCountedAndALearnerFilterShowsThatLearnerAlone() throws {
        let entries = try (0..<30).map { Self.entry(try Self.event(learner: "learner-\($0 % 3)", course: "course-\($0)")) }
        let everyone = WatchDashboard(endpoint: "e", learner: nil).render(entries, columns: 100, rows: 20)
        #expect(everyone[0].contains("3 learners"))
        #expect(everyone.contains { $0.hasPrefix("... ") && $0.hasSuffix(" more courses") }, "\(everyone)")
        let one = WatchDashboard(endpoint: "e", learner: "learner-1").render(entries, columns: 100, rows: 40)
        #expect(one[0].contains("1 learners"))
        #expect(!one.contains { $0.hasPrefix("course-0 ") } && one.contains { $0.hasPrefix("course-1 ") }, "\(one)")
    }
}
