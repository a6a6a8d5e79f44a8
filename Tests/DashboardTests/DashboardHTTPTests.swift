import Catalog
import Dashboard
import EventSubscription
import EventPublishing
import Foundation
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// The dashboard's HTTP side against a real `lyceum serve`, with raw peers
/// (`Clients/dashboard_http.py`): access, resuming by `Last-Event-ID`, hostile requests and
/// a thousand open streams.
@Suite("The dashboard's HTTP endpoint")
struct DashboardHTTPTests {
    private func http(_ port: Int, _ path: String, _ headers: [String] = []) throws -> String {
        try Python.runShared("dashboard_http.py", ["get", String(port), path] + headers).stdout
    }

    private func progress(_ server: Deployment, _ learner: String, _ op: String = "begin_course", lesson: String? = nil) throws {
        let lessonMember = lesson.map { #","lesson":"\#($0)""# } ?? ""
        #expect(try server.call("progress", #"{"op":"\#(op)","learner":"\#(learner)","course":"1"\#(lessonMember)}"#)["ok"] as? Bool == true)
    }

    @Test func aNonLoopbackAddressWithoutATokenIsRefusedAtStartSayingWhy() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let run = try LyceumProcess.run(["serve", "--data", data.path, "--dashboard-port", "18080", "--dashboard-address", "0.0.0.0"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("dashboard-token") && run.stderr.contains("learner ids"), "\(run.stderr)")
    }

    @Test func withATokenThePageAndTheStreamRequireItAndTheScriptDoesNot() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let token = "s3cret-token-for-the-dashboard"
        let server = try Deployment.serve(data: data.path, arguments: ["--dashboard-port", String(port), "--dashboard-token", token])
        #expect(try http(port, "/").hasPrefix("HTTP/1.1 401"))
        #expect(try http(port, "/events?token=wrong-token-of-the-same-len").hasPrefix("HTTP/1.1 401"))
        #expect(try http(port, "/", ["Authorization: Bearer \(token)"]).hasPrefix("HTTP/1.1 200"))
        #expect(try http(port, "/events?token=\(token)").contains("event: snapshot"))
        #expect(try http(port, "/dashboard.js").hasPrefix("HTTP/1.1 200"))
        #expect(server.process.signal(SIGTERM) == 0)
    }

    @Test func aStreamResumedByLastEventIDGetsOnlyTheEventsAfterItAndAnUnknownIDGetsASnapshot() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--dashboard-port", String(port), "--durability", "none"])
        for learner in ["ada", "bob", "cy"] { try progress(server, learner) }
        var all = ""
        #expect(try eventually {
            all = try http(port, "/events", ["Last-Event-ID: 0"])
            return all.contains("\"learner\":\"cy\"")
        })
        // Resumed after the first event: the other two, and no snapshot.
        let ids = all.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
        #expect(ids.count == 3, "\(all)")
        let resumed = try http(port, "/events", ["Last-Event-ID: \(ids[0])"])
        #expect(!resumed.contains("event: snapshot"))
        #expect(resumed.contains("\"learner\":\"bob\"") && resumed.contains("\"learner\":\"cy\"") && !resumed.contains("\"learner\":\"ada\""))
        // An id the ring never held: a snapshot with every learner counted.
        let fresh = try http(port, "/events", ["Last-Event-ID: 999999"])
        #expect(fresh.contains("event: snapshot") && fresh.contains("\"started\":3"), "\(fresh)")
        #expect(server.process.signal(SIGTERM) == 0)
    }

    @Test func hostileRequestsAndAThousandUnreadStreamsLeaveServeAnsweringWithinItsMemory() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--dashboard-port", String(port), "--durability", "none"])
        let baseline = try #require(try Self.residentKiB(server.process.processIdentifier))

        let malformed = try Python.runShared("dashboard_http.py", ["malformed", String(port)])
        let statuses = malformed.stdout.split(separator: "\n").map(String.init)
        #expect(statuses.count == 7, "\(malformed.stdout)\(malformed.stderr)")
        let codes = statuses.prefix(6).map { $0.split(separator: " ").dropFirst().first.map(String.init) ?? $0 }
        #expect(codes.count == 6 && Array(codes[0..<4]) == ["400", "400", "405", "404"] && codes[5] == "200", "\(statuses)")
        // Headers over 16 KiB: 431, unless the unread rest of them reset the connection first.
        #expect(codes.count == 6 && (codes[4] == "431" || codes[4] == "(closed)"), "\(statuses)")
        #expect(statuses.last?.hasPrefix("slow client closed") == true, "\(statuses)")

        let streams = try ChildProcess("/usr/bin/python3", [Python.sharedPath("dashboard_http.py"), "streams", String(port), "1000"])
        defer { streams.stop() }
        #expect(streams.waitForLine("open") != nil)
        // Events flow to a thousand streams that never read: more than a stream may hold unsent
        // (~0.5 KiB each, 128 KiB + the kernel's buffers), so they are cut, and none holds serve.
        let context = try Context()
        let client = Client(endpoint: server.endpoint, configuration: ClientConfiguration(timeout: .seconds(10), attempts: 1), context: context)
        defer { client.close() }
        for index in 0..<1_500 {
            let reply = try client.call("progress", body: [Array(#"{"op":"begin_course","learner":"l\#(index)","course":"1"}"#.utf8)])
            #expect(reply.first.map { String(decoding: $0, as: UTF8.self).hasPrefix(#"{"ok":true"#) } == true)
        }
        #expect(try server.call("books", #"{"op":"get","learner":"ada","id":"00000000-0000-0000-0000-000000000000"}"#)["ok"] != nil)
        let page = try http(port, "/")
        #expect(page.hasPrefix("HTTP/1.1 200"), "\(page)")
        #expect(try eventually { try http(port, "/events").contains("\"started\":1500") })
        let resident = try #require(try Self.residentKiB(server.process.processIdentifier))
        #expect(resident - baseline < 256 * 1024, "serve grew from \(baseline) KiB to \(resident) KiB")
        #expect(server.process.standardError.contains("streams cut"), "no stream was cut:\n\(server.process.standardError)")
        #expect(server.process.signal(SIGTERM) == 0)
    }

    /// `VmRSS` of the process, in KiB.
    static func residentKiB(_ process: Int32) throws -> Int? {
        let status = try String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8)
        return status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap { Int($0.split(separator: " ")[1]) }
    }
}

/// Where `lyceum watch` and `broker`'s dashboard take course titles from: the catalog service.
@Suite("Course titles from the catalog service")
struct CatalogTitlesTests {
    @Test func everyCourseOfTheCatalogComesWithItsTitleAcrossPages() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        let context = try Context()
        let client = Client(endpoint: server.endpoint, configuration: ClientConfiguration(timeout: .seconds(5), attempts: 1), context: context)
        defer { client.close() }
        var pages = 0
        // Pages of two courses, so the sample catalog takes several.
        let titles = try CatalogTitles.fetch(pageSize: 2) { request in
            pages += 1
            return try client.call("catalog", body: [request]).first ?? []
        }
        #expect(titles == (try Catalog.sample()).courses.map { CourseTitle(id: $0.id, title: $0.title) })
        #expect(pages > 1)
        #expect(server.process.signal(SIGTERM) == 0)
    }

    /// The browser dashboard of a `broker` names lessons too: one `get_course` gives a course's.
    @Test func eachCoursesLessonsTitlesComeFromGetCourse() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        let context = try Context()
        let client = Client(endpoint: server.endpoint, configuration: ClientConfiguration(timeout: .seconds(5), attempts: 1), context: context)
        defer { client.close() }
        let catalog = try Catalog.sample()
        let course = try #require(catalog.courses.first { !$0.lessons.isEmpty })
        let lessons = try CatalogTitles.lessons(of: course.id) { request in try client.call("catalog", body: [request]).first ?? [] }
        #expect(lessons == Dictionary(uniqueKeysWithValues: course.lessons.map { ($0.id, $0.title) }))
        #expect(throws: EventsError.self) {
            try CatalogTitles.lessons(of: "no-such-course") { request in try client.call("catalog", body: [request]).first ?? [] }
        }
        #expect(server.process.signal(SIGTERM) == 0)
    }

    /// A catalog of thousands of courses must not cost a `get_course` per course at every
    /// refresh: the broker's cache asks only for the courses seen in events, once while kept
    /// (an unknown one too, kept as having no lessons).
    @Test func theBrokersCacheAsksForTheLessonsOfCoursesSeenInEventsOnlyAndOnce() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        let asked = Requests()
        let cache = CatalogTitleCache(call: try Self.catalogCaller(server.endpoint, recordingInto: asked))
        let catalog = try Catalog.sample()
        let seen = try #require(catalog.courses.first { !$0.lessons.isEmpty })
        try #require(catalog.courses.count > 1)

        let before = cache.titles(seen: [])
        #expect(before.map(\.id) == catalog.courses.map(\.id))
        let noneWithLessons = before.allSatisfy { $0.lessons.isEmpty }
        #expect(noneWithLessons)
        #expect(!asked.list.withLock { $0 }.contains { $0.hasPrefix("get_course") })

        let after = cache.titles(seen: [seen.id, "no-such-course"])
        #expect(after.first { $0.id == seen.id }?.lessons == Dictionary(uniqueKeysWithValues: seen.lessons.map { ($0.id, $0.title) }))
        let othersWithoutLessons = after.filter { $0.id != seen.id }.allSatisfy { $0.lessons.isEmpty }
        #expect(othersWithoutLessons)
        // Seen again: kept, not asked again.
        #expect(cache.titles(seen: [seen.id, "no-such-course"]).first { $0.id == seen.id }?.lessons.isEmpty == false)
        #expect(asked.list.withLock { $0 }.filter { $0.hasPrefix("get_course") }.sorted() == ["get_course \(seen.id)", "get_course no-such-course"].sorted())
        #expect(server.process.signal(SIGTERM) == 0)
    }

    /// The `op` and `course` of each catalog request, in order.
    final class Requests: Sendable {
        let list = Mutex<[String]>([])
    }

    /// A call to the catalog service of the broker at `endpoint` that records each request's `op` and `course` in `requests`.
    static func catalogCaller(_ endpoint: String, recordingInto requests: Requests) throws -> ([UInt8]) throws -> [UInt8] {
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(5), attempts: 1), context: try Context())
        return { request in
            let body = try parse(request)
            requests.list.withLock { $0.append([body["op"] as? String, body["course"] as? String].compactMap { $0 }.joined(separator: " ")) }
            return try client.call("catalog", body: [request]).first ?? []
        }
    }
}

/// `lyceum broker --dashboard-port`: the stream is bridged from the forwarder's output, snapshots
/// come from the worker's advertised endpoint, titles from the catalog service.
@Suite("The dashboard of a broker")
struct BrokerDashboardTests {
    @Test func theBrokersDashboardShowsTheWorkersProgressUnderCatalogTitles() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let endpoint = try freeLoopbackEndpoint()
        let forwarder = try freeLoopbackEndpoint()
        let port = try freeLoopbackPort()
        let broker = try LyceumProcess([
            "broker", "--endpoint", endpoint, "--events-endpoint", try freeLoopbackEndpoint(), "--forwarder-endpoint", forwarder,
            "--dashboard-port", String(port),
        ])
        defer { broker.stop() }
        let worker = try LyceumProcess([
            "worker", "--broker", endpoint, "--service", "progress", "--service", "catalog", "--sessions", "1", "--data", data.path,
            "--forwarder-endpoint", forwarder, "--durability", "none",
        ])
        defer { worker.stop() }
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let write = #"{"op":"mark_watched","learner":"kim","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#
        // Until the worker has registered, the call gets no answer; it is retried.
        #expect(try eventually {
            try LyceumProcess.run(["call", "--broker", endpoint, "--timeout", "1000", "progress", write]).status == 0
        }, "broker:\n\(broker.standardError)\nworker:\n\(worker.standardError)")
        var stream = ""
        let shown = try eventually {
            stream = try Python.runShared("dashboard_http.py", ["get", String(port), "/events"]).stdout
            if stream.contains(#""course":"\#(course.id)","title":"\#(course.title)","started":1"#)
                && stream.contains(#""lesson_title":"\#(course.lessons[0].title)""#) { return true }
            // An event published before the forwarder's subscription reached the worker is lost
            // (PUB/SUB's late joiner): unmark and mark again, so that new ones are published.
            for op in ["mark_unwatched", "mark_watched"] {
                _ = try LyceumProcess.run(["call", "--broker", endpoint, "--timeout", "1000", "progress", write.replacingOccurrences(of: "mark_watched", with: op)])
            }
            return false
        }
        #expect(shown, "\(stream)\nbroker:\n\(broker.standardError)")
        #expect(worker.signal(SIGTERM) == 0)
        #expect(broker.signal(SIGTERM) == 0)
    }
}
