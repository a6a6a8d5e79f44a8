import Catalog
import Foundation
import LyceumTestSupport
import Testing

/// The dashboard in a real browser: Debian's headless Chromium, driven over the DevTools
/// protocol by `Clients/dashboard_browser.py`, against a real `lyceum serve --dashboard-port`.
@Suite("The dashboard in a real browser")
struct DashboardBrowserTests {
    /// Where the screenshot is saved: a test artifact, outside the repository.
    static let artifacts = FileManager.default.temporaryDirectory.appendingPathComponent("lyceum-test-output/dashboard").path

    @Test func thePageShowsTitlesCountsAndEventsLiveAndAReconnectingBrowserGetsWhatItMissed() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--dashboard-port", String(port), "--durability", "none"])
        let catalog = try Catalog.sample()
        let course = try #require(catalog.courses.first { $0.lessons.count >= 2 && ($0.quiz?.questions.count ?? 0) >= 1 })
        // 30 learners watch its first one or two lessons: none completes it.
        let active = try #require(catalog.courses.first { $0.id != course.id && $0.lessons.count >= 3 })
        let run = try Python.run("dashboard_browser.py", [
            String(port), server.endpoint, course.id, course.lessons.map(\.id).joined(separator: ","),
            String(course.quiz?.questions.count ?? 0), Self.artifacts, active.id, active.lessons.map(\.id).joined(separator: ","),
        ])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
                                  "no report; stderr:\n\(run.stderr)\nserve:\n\(server.process.standardError)")
        #expect(run.status == 0, "\(report["error"] ?? "") serve:\n\(server.process.standardError)")
        func row(_ step: String, _ id: String? = nil) -> [String: Any]? {
            ((report[step] as? [String: Any])?["courses"] as? [[String: Any]])?.first { $0["course"] as? String == id ?? course.id }
        }
        func dashboard(_ step: String) -> [String: Any]? { (report[step] as? [String: Any])?["dashboard"] as? [String: Any] }

        // Before any write: the course by its title, nobody in it.
        #expect(row("before")?["title"] as? String == course.title)
        #expect(row("before")?["started"] as? Int == 0)
        // After: Ada completed it and took the quiz (all answers 0), Bob began it; every event is in the feed.
        let writes = try #require(report["writes"] as? Int)
        #expect(row("after")?["started"] as? Int == 2)
        #expect(row("after")?["completed"] as? Int == 1)
        #expect(row("after")?["bar"] as? String == "50%")
        // Ada at 100 %, Bob at 0 %: half-way on average.
        #expect(row("after")?["progress_bar"] as? String == "50%")
        #expect(row("after")?["progress"] as? String == "50 %")
        #expect((row("after")?["quiz"] as? String)?.hasSuffix("%") == true)
        let feed = (report["after"] as? [String: Any])?["feed"] as? [String] ?? []
        #expect(feed.count == writes)
        #expect(feed.first?.contains("bob in \(course.title)") == true)
        #expect(feed.contains { $0.contains("course completed") })
        // Lessons by their titles, not their ids.
        let feedLessons = (report["after"] as? [String: Any])?["feed_lessons"] as? [String] ?? []
        #expect(Set(feedLessons) == Set(course.lessons.map(\.title)), "\(feedLessons)")
        #expect(dashboard("after")?["snapshots"] as? Int == 1)

        // The screenshot is a real page, not a blank one.
        let screenshot = try #require(report["screenshot"] as? String)
        #expect(FileManager.default.fileExists(atPath: screenshot))
        #expect((report["colours"] as? Int ?? 0) >= 50, "only \(report["colours"] ?? 0) colours in \(screenshot)")

        // Reconnected with Last-Event-ID, it received the two events it missed, without a new snapshot.
        let lastSeen = try #require(dashboard("after")?["lastEventId"] as? String)
        #expect((report["last_event_ids"] as? [String])?.contains(lastSeen) == true)
        #expect(dashboard("resumed")?["events"] as? Int == writes + 2)
        #expect(dashboard("resumed")?["snapshots"] as? Int == 1)
        #expect(row("resumed")?["started"] as? Int == 3)

        // 30 learners at 25-50 % of a course, none finished: the completion bar is empty, and
        // the progress bar shows their average (each percent rounded down, as the service does).
        let percents = (0..<30).map { (1 + $0 % 2) * 100 / active.lessons.count }
        let average = (Double(percents.reduce(0, +)) / 30 * 10).rounded() / 10
        #expect(row("active", active.id)?["started"] as? Int == 30)
        #expect(row("active", active.id)?["completed"] as? Int == 0)
        #expect(row("active", active.id)?["bar"] as? String == "0%")
        #expect((row("active", active.id)?["progress_bar"] as? String).flatMap { Double($0.dropLast()) } == average,
                "\(String(describing: row("active", active.id))), expected \(average)")
        #expect(row("active", active.id)?["progress"] as? String == "\(Int(average.rounded())) %")
        #expect(server.process.signal(SIGTERM) == 0)
    }
}
