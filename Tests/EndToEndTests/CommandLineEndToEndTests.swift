import Foundation
import LyceumTestSupport
import Testing

/// The other subcommands as real processes: `call`'s output and exit statuses, flag errors,
/// `broker` with a separate `worker`, the journal tools on a serve data directory, and SIGHUP.
@Suite(.serialized)
struct CommandLineEndToEndTests {
    @Test func callPrintsTheReplyAndSaysHowItWentInItsExitStatus() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)

        let ok = try LyceumProcess.run(["call", "--broker", server.endpoint, "catalog", #"{"op":"list_categories"}"#])
        #expect(ok.status == 0)
        #expect(try parse(Array(ok.stdout.utf8)).isOK)

        let refused = try LyceumProcess.run(["call", "--broker", server.endpoint, "books", #"{"op":"shelve"}"#])
        #expect(refused.status == 1)
        #expect(try parse(Array(refused.stdout.utf8)).errorCode == "unknown_op")

        server.process.stop()
        let unreachable = try LyceumProcess.run(["call", "--broker", server.endpoint, "--timeout", "300", "books", "{}"])
        #expect(unreachable.status == 3)
        #expect(unreachable.stderr.contains(server.endpoint))
        #expect(unreachable.stdout.isEmpty)
    }

    @Test(arguments: [
        (["call", "--timeout", "soon", "books", "{}"], "--timeout"),
        (["call", "--colour", "red", "books", "{}"], "--colour"),
        (["call", "books"], "expected 2 arguments"),
        (["worker", "--broker", "tcp://127.0.0.1:1", "--sessions", "0"], "--sessions"),
        (["serve", "--sessions", "4"], "--sessions"),
        (["serve", "--durability", "sometimes"], "--durability"),
        (["serve", "--endpoint", "127.0.0.1:5555"], "--endpoint"),
        (["worker", "--service", "books"], "--broker is required"),
        (["worker", "--broker", "tcp://127.0.0.1:1", "--service", "films"], "--service"),
        (["broker", "--data", "x"], "--data"),
        (["launch"], "unknown command"),
    ])
    func badCommandLinesExitWithStatus2NamingTheProblem(arguments: [String], named: String) throws {
        let result = try LyceumProcess.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(named), "\(result.stderr)")
    }

    @Test func serveExitsWithStatus1NamingAnEndpointItCannotBind() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let busy = try LoopbackListener()
        let result = try LyceumProcess.run(["serve", "--endpoint", busy.endpoint, "--data", data.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bind \(busy.endpoint): Address already in use"), "\(result.stderr)")
    }

    @Test func serveExitsWithStatus1NamingAnEventsEndpointItCannotBind() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let busy = try LoopbackListener()
        let result = try LyceumProcess.run([
            "serve", "--endpoint", try freeLoopbackEndpoint(), "--events-endpoint", busy.endpoint,
            "--snapshot-endpoint", try freeLoopbackEndpoint(), "--data", data.path,
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bind \(busy.endpoint): Address already in use"), "\(result.stderr)")
    }

    @Test func workersInTheirOwnProcessServeThroughASeparateBroker() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let endpoint = try freeLoopbackEndpoint()
        let broker = try LyceumProcess([
            "broker", "--endpoint", endpoint, "--events-endpoint", try freeLoopbackEndpoint(), "--forwarder-endpoint", try freeLoopbackEndpoint(),
        ])
        defer { broker.stop() }
        let worker = try LyceumProcess([
            "worker", "--broker", endpoint, "--service", "books", "--service", "catalog", "--sessions", "2", "--data", data.path,
        ])
        defer { worker.stop() }

        var created: (status: Int32?, stdout: String, stderr: String) = (nil, "", "")
        let served = eventually {
            do {
                created = try LyceumProcess.run([
                    "call", "--broker", endpoint, "--timeout", "1000", "books",
                    #"{"op":"create","learner":"cy","title":"Beloved","author":"Toni Morrison","genre":"Mystery","rating":5}"#,
                ])
            } catch {
                return false
            }
            return created.status == 0
        }
        #expect(served, "\(created.stderr)\nworker:\n\(worker.standardError)")
        #expect(FileManager.default.fileExists(atPath: data.path + "/books/journal.jsonl"))
        #expect(!FileManager.default.fileExists(atPath: data.path + "/progress"))
        let listed = try LyceumProcess.run(["call", "--broker", endpoint, "books", #"{"op":"list","learner":"cy"}"#])
        #expect(listed.stdout.contains("Beloved"))
        // Ranked on the worker's catalog-search thread, answered through its pool; that thread
        // stops with the pool, for the exit status 0 below.
        let searched = try LyceumProcess.run(["call", "--broker", endpoint, "catalog", #"{"op":"search","query":"algebra"}"#])
        #expect(searched.status == 0 && searched.stdout.contains(#""title":"Algebra""#), "\(searched.stdout)\(searched.stderr)")

        #expect(worker.signal(SIGTERM) == 0)
        #expect(broker.signal(SIGTERM) == 0)
    }

    @Test func aServiceDirectoryThatCannotBeListedFailsTheJournalToolsNamingIt() throws {
        // Was taken for "no partitions", so `journal check` looked at nothing there and passed.
        let data = try TemporaryDirectory()
        defer { data.remove() }
        #expect(FileManager.default.createFile(atPath: data.path + "/books", contents: Data("not a directory".utf8)))
        let check = try LyceumProcess.run(["journal", "check", "--data", data.path])
        #expect(check.status == 1, "\(check)")
        #expect(check.stderr.contains(data.path + "/books") && check.stderr.contains("cannot be listed"), "\(check.stderr)")
    }

    @Test func journalToolsHandleEachServiceJournalOfADataDirectory() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        #expect(try server.call("books", ServeEndToEndTests.createDune).isOK)
        let held = try LyceumProcess.run(["journal", "compact", "--data", data.path])
        #expect(held.status == 1)
        #expect(held.stderr.contains("locked"))
        #expect(server.process.signal(SIGTERM) == 0)

        let check = try LyceumProcess.run(["journal", "check", "--data", data.path])
        #expect(check.status == 0)
        #expect(check.stdout.contains(data.path + "/books"))
        #expect(check.stdout.contains(data.path + "/progress"))
        #expect(check.stdout.contains("books=1"))
        let compact = try LyceumProcess.run(["journal", "compact", "--data", data.path])
        #expect(compact.status == 0, "\(compact.stderr)")
    }

    @Test func sighupReloadsTheCatalogAndABrokenFileLeavesTheOldOneServing() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let catalogFile = data.path + "/catalog.json"
        try Self.catalog(title: "Knots for Sailors").write(toFile: catalogFile, atomically: true, encoding: .utf8)
        let server = try Deployment.serve(data: data.path + "/data", arguments: ["--catalog", catalogFile])
        let search = #"{"op":"list_courses"}"#
        #expect("\(try server.call("catalog", search))".contains("Knots for Sailors"))

        try "[{\"course_name\": ".write(toFile: catalogFile, atomically: true, encoding: .utf8)
        server.process.send(SIGHUP)
        #expect(eventually { server.process.standardError.contains("catalog reload failed") })
        #expect("\(try server.call("catalog", search))".contains("Knots for Sailors"))

        try Self.catalog(title: "Bread Baking").write(toFile: catalogFile, atomically: true, encoding: .utf8)
        server.process.send(SIGHUP)
        #expect(eventually { server.process.standardError.contains("catalog reloaded") })
        let reloaded = "\(try server.call("catalog", search))"
        #expect(reloaded.contains("Bread Baking") && !reloaded.contains("Knots"))
        #expect(server.process.signal(SIGTERM) == 0)
    }

    /// A one-course catalog in the course app's format.
    static func catalog(title: String) -> String {
        """
        [{"course_name": "\(title)", "course_thumbnail": "https://example.com/t.jpg",
          "course_videos": [{"video_title": "Intro", "video_thumbnail": "https://example.com/v.jpg",
                             "video_link": "https://example.com/v.mp4"}]}]
        """
    }
}
