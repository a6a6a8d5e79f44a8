import Foundation
import LyceumTestSupport
import LyceumServer
import Majordomo
import Testing
import ZeroMQ

/// Operating a real `lyceum serve`: metrics scraped by Prometheus's own parser, `lyceum status`,
/// structured logs, SIGTERM drain under load and SIGHUP reload under load.
@Suite(.serialized)
struct OperationsEndToEndTests {
    static let createBook = #"{"op":"create","learner":"ops","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#

    @Test func metricsParseWithPrometheusParserAndMoveWithTrafficAndStatusAnswers() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--metrics-port", String(port), "--log-level", "debug", "--log-format", "json"])
        let before = try Metrics.scrape(port: port)
        #expect(before.contentType.hasPrefix("text/plain; version=0.0.4"))
        #expect(before.families["lyceum_request_duration_seconds"] == "histogram")
        #expect(before.families["lyceum_requests"] == "counter")
        // serve answers its services itself: no workers register.
        #expect(before.value("lyceum_broker_connected_workers") == 0)

        for _ in 0..<5 { #expect(try server.call("catalog", #"{"op":"list_categories"}"#).isOK) }
        #expect(try server.call("books", Self.createBook).isOK)
        #expect(try server.call("books", Self.createBook).isOK)
        #expect(try server.call("books", #"{"op":"shelve"}"#).errorCode == "unknown_op")
        let watched = #"{"op":"mark_watched","learner":"ada","course":"swiftui-essentials","lesson":"state-and-binding"}"#
        #expect(try server.call("progress", watched).isOK)

        let after = try Metrics.scrape(port: port)
        let categories = ["service": "catalog", "op": "list_categories"]
        #expect(after.value("lyceum_requests_total", categories) - before.value("lyceum_requests_total", categories) == 5)
        #expect(after.value("lyceum_request_duration_seconds_count", ["service": "books", "op": "create"]) == 2)
        #expect(after.value("lyceum_request_duration_seconds_bucket", ["service": "books", "op": "create", "le": "+Inf"]) == 2)
        #expect(after.value("lyceum_requests_total", ["service": "books", "op": "invalid"]) == 1)
        #expect(after.value("lyceum_request_errors_total", ["service": "books", "code": "unknown_op"]) == 1)
        #expect(after.value("lyceum_journal_appends_total", ["service": "books"]) == 2)
        #expect(after.value("lyceum_journal_syncs_total", ["service": "books"]) >= 1)
        #expect(after.value("lyceum_journal_bytes", ["service": "books"]) > before.value("lyceum_journal_bytes", ["service": "books"]))
        #expect(after.value("lyceum_broker_workers", ["service": "books"]) == 0)
        #expect(after.families["lyceum_events_published"] == "counter")
        // Two book creates and one progress write.
        #expect(after.value("lyceum_events_published_total") - before.value("lyceum_events_published_total") == 3)
        #expect(after.value("lyceum_events_dropped_total") == 0)

        let status = try LyceumProcess.run(["status", "--broker", server.endpoint])
        #expect(status.status == 0, "\(status.stderr)")
        let report = try parse(Array(status.stdout.utf8))
        #expect(report["role"] as? String == "serve")
        #expect(report["workers"] as? Int == 0)
        #expect((report["uptime_seconds"] as? Double ?? 0) > 0)
        let services = report["services"] as? [[String: Any]] ?? []
        // The admin-only backup service is answered by serve itself too, so status lists it.
        #expect(services.map { $0["name"] as? String } == ["books", "catalog", "lyceum.backup", "progress"])
        #expect(services.allSatisfy { $0["local"] as? Bool == true && $0["workers"] as? Int == 0 && $0["queued_requests"] as? Int == 0 })
        let books = (report["journals"] as? [[String: Any]])?.first { $0["service"] as? String == "books" }
        #expect(books?["last_sequence"] as? Int == 2)
        #expect((books?["bytes"] as? Int ?? 0) > 0)

        #expect(server.process.signal(SIGTERM) == 0)
        // Every line is one JSON object with the structured fields; request lines carry the op.
        let lines = server.process.standardError.split(separator: "\n")
        let objects = try lines.map { try parse(Array($0.utf8)) }
        #expect(objects.allSatisfy { $0["ts"] is String && $0["level"] is String && $0["component"] is String && $0["msg"] is String })
        #expect(objects.contains { $0["component"] as? String == "request" && $0["op"] as? String == "create" && $0["latency_us"] != nil })
    }

    @Test func statusWithoutABrokerExits3NamingTheEndpoint() throws {
        let endpoint = try freeLoopbackEndpoint()
        let result = try LyceumProcess.run(["status", "--broker", endpoint, "--timeout", "300"])
        #expect(result.status == 3)
        #expect(result.stderr.contains(endpoint))
    }

    @Test func aTakenMetricsPortStopsTheStartNamingThePort() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let first = try Deployment.serve(data: data.path + "/a", arguments: ["--metrics-port", String(port)])
        let second = try LyceumProcess.run(["serve", "--endpoint", try freeLoopbackEndpoint(), "--data", data.path + "/b", "--metrics-port", String(port)])
        #expect(second.status == 1)
        #expect(second.stderr.contains("127.0.0.1:\(port)"))
        #expect(first.process.signal(SIGTERM) == 0)
    }

    @Test func sigtermUnderLoadDrainsWithNoFailedRequestAndLosesNoAcknowledgedWrite() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        let load = Load(endpoint: server.endpoint, clients: 4, untilNoReply: true) { client, sequence in
            ("books", #"{"op":"create","request_id":"c\#(client)-\#(sequence)","learner":"drain","title":"T\#(client)-\#(sequence)","author":"A","genre":"Fantasy","rating":3}"#)
        }
        load.run(for: .milliseconds(1500))
        #expect(server.process.signal(SIGTERM) == 0)
        let outcomes = try load.stop()
        let replied = try outcomes.compactMap { try $0.parsed() }
        #expect(replied.count > 20, "too little load to prove anything: \(replied.count) replies")
        #expect(replied.allSatisfy { $0.isOK }, "\(replied.filter { !$0.isOK })")
        #expect(server.process.standardError.contains("stopping"))

        try server.restart()
        let context = try Context()
        let client = Client(endpoint: server.endpoint, configuration: ClientConfiguration(timeout: .seconds(5), attempts: 1), context: context)
        defer { client.close() }
        for created in replied {
            let id = (created.result["book"] as? [String: Any])?["id"] as? String ?? ""
            let reply = try client.call("books", body: [Array(#"{"op":"get","learner":"drain","id":"\#(id)"}"#.utf8)])
            #expect(try parse(reply[0]).isOK, "acknowledged book \(id) is missing after the drain")
        }
        #expect(server.process.signal(SIGTERM) == 0)
    }

    @Test func sighupUnderLoadReloadsTheCatalogAndTheLogLevelWithoutAFailedRequest() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let catalogFile = data.path + "/catalog.json"
        let configFile = data.path + "/lyceum.conf"
        try CommandLineEndToEndTests.catalog(title: "Knots for Sailors").write(toFile: catalogFile, atomically: true, encoding: .utf8)
        try "catalog = \(catalogFile)\nlog-level = info\n".write(toFile: configFile, atomically: true, encoding: .utf8)
        let server = try Deployment.serve(data: data.path + "/data", arguments: ["--config", configFile, "--log-format", "logfmt"])
        let load = Load(endpoint: server.endpoint, clients: 3) { _, _ in ("catalog", #"{"op":"list_courses"}"#) }
        load.run(for: .milliseconds(500))
        #expect(!server.process.standardError.contains("component=request"), "request lines are off at info")

        try CommandLineEndToEndTests.catalog(title: "Bread Baking").write(toFile: catalogFile, atomically: true, encoding: .utf8)
        try "catalog = \(catalogFile)\nlog-level = debug\n".write(toFile: configFile, atomically: true, encoding: .utf8)
        server.process.send(SIGHUP)
        #expect(eventually { server.process.standardError.contains("catalog reloaded") })
        #expect(eventually { server.process.standardError.contains("component=request") })
        load.run(for: .milliseconds(300))
        let outcomes = try load.stop()
        #expect(outcomes.allSatisfy { $0.reply != nil }, "a request got no reply during the reload")
        let replies = try outcomes.compactMap { try $0.parsed() }
        #expect(replies.allSatisfy { $0.isOK })
        #expect("\(replies.first?.result ?? [:])".contains("Knots for Sailors"))
        #expect("\(replies.last?.result ?? [:])".contains("Bread Baking"))
        #expect(server.process.signal(SIGTERM) == 0)
        let lines = server.process.standardError.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("ts=") && $0.contains(" level=") && $0.contains(" component=") && $0.contains(" msg=") })
    }

    @Test func aSecondSigintExitsAtOnceAndLeavesTheJournalConsistent() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--metrics-port", String(port)])
        #expect(try server.call("books", Self.createBook).isOK)
        // A metrics client that connects and says nothing holds the metrics responder for up
        // to a second, and so holds the drain open long enough for a second SIGINT.
        let silent = try connectToLoopback(port: port)
        defer { close(silent) }
        Thread.sleep(forTimeInterval: 0.2)
        server.process.send(SIGINT)
        #expect(eventually { server.process.standardError.contains("stopping") })
        #expect(server.process.signal(SIGINT, timeout: .seconds(5)) == 130)
        #expect(server.process.standardError.contains("second SIGINT"))
        let check = try LyceumProcess.run(["journal", "check", "--data", data.path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("books=1"))
    }
}
