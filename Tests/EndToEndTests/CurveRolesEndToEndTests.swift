import Catalog
import Foundation
import LyceumTestSupport
import Testing

/// Issue 16, the roles end to end across real processes: `serve`, and `broker` with separate
/// `worker` processes, all on CURVE, driven by pyzmq peers (Clients/curve_peer.py) and the CLI.
@Suite(.serialized)
struct CurveRolesEndToEndTests {

    /// The standard keys plus an `admin` and, in `worker-authorized/`, the keys a worker's
    /// snapshot ROUTER admits: a dashboard, a learner (refused: no subscribe_events) and the
    /// broker's own key (for the broker's dashboard).
    static func keys() throws -> CurveKeys {
        let keys = try CurveEndToEndTests.standardKeys().make("admin", role: "admin")
        try FileManager.default.createDirectory(atPath: workerAuthorized(keys), withIntermediateDirectories: true)
        for name in ["dashboard", "ada-phone", "server"] {
            try FileManager.default.copyItem(atPath: keys.publicPath(name), toPath: workerAuthorized(keys) + "/" + name)
        }
        return keys
    }

    static func workerAuthorized(_ keys: CurveKeys) -> String { keys.directory.path + "/worker-authorized" }

    /// curve_peer.py `mode` at `endpoint` as `key` (nil: plaintext) of the server key `serverKey`
    /// (a certificate path or `z85:KEY`); its last line.
    static func peer(_ mode: String, _ endpoint: String, keys: CurveKeys, as key: String?, server serverKey: String, _ arguments: [String]) throws -> String {
        let credentials = key.map { [serverKey, keys.secretPath($0)] } ?? ["-", "-"]
        let run = try Python.run("curve_peer.py", [mode, endpoint] + credentials + arguments)
        #expect(run.status == 0, "curve_peer.py \(mode): \(run.stderr)")
        return run.stdout.split(separator: "\n").last.map(String.init) ?? ""
    }

    /// A CURVE broker and a CURVE `worker` for `services` (with the worker's authorised keys).
    final class Cluster {
        let endpoint: String, events: String, forwarder: String
        let broker: LyceumProcess, worker: LyceumProcess

        init(keys: CurveKeys, data: String, services: [String], brokerArguments: [String] = []) throws {
            endpoint = try freeLoopbackEndpoint()
            events = try freeLoopbackEndpoint()
            forwarder = try freeLoopbackEndpoint()
            broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", events, "--forwarder-endpoint", forwarder,
                                        "--curve-secret-key", keys.secretPath("server"), "--authorized-keys", keys.authorized] + brokerArguments)
            worker = try LyceumProcess(["worker", "--broker", endpoint, "--forwarder-endpoint", forwarder, "--data", data, "--durability", "none",
                                        "--authorized-keys", CurveRolesEndToEndTests.workerAuthorized(keys)]
                                       + services.flatMap { ["--service", $0] } + keys.client("worker"))
            let endpoint = endpoint, service = services[0]
            let ready = eventually {
                (try? CurveEndToEndTests.peer("call", endpoint, keys: keys, as: "app", [service, #"{"op":"list","learner":"nobody"}"#]))?
                    .contains(#""ok":true"#) == true
            }
            try #require(ready, "broker:\n\(broker.standardError)\nworker:\n\(worker.standardError)")
        }

        deinit {
            worker.stop()
            broker.stop()
        }
    }

    @Test("an app key that sends READY for books is never registered: every one of a client's 100 creates reaches the real worker")
    func impostorWorkerGetsNothing() throws {
        let keys = try Self.keys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let cluster = try Cluster(keys: keys, data: data.path, services: ["books"])
        let impostor = try ChildProcess("/usr/bin/python3", [Python.path("curve_peer.py"), "worker", cluster.endpoint, keys.publicPath("server"),
                                                            keys.secretPath("app2"), "books", "8"])
        defer { impostor.stop() }
        let create = #"{"op":"create","learner":"victim","title":"Emma","author":"Jane Austen","genre":"Romance","rating":4}"#
        #expect(try CurveEndToEndTests.peer("many", cluster.endpoint, keys: keys, as: "app", ["books", create, "100"]) == "replies 100")
        let list = try CurveEndToEndTests.peer("call", cluster.endpoint, keys: keys, as: "app", ["books", #"{"op":"list","learner":"victim","limit":100}"#])
        #expect(list.components(separatedBy: #""title":"Emma""#).count - 1 == 100, "\(list)")
        let impostorSaw = try #require(impostor.waitForLine("requests"))
        #expect(impostorSaw.hasPrefix("requests 0 disconnects "), "\(impostorSaw)")
        #expect(impostorSaw != "requests 0 disconnects 0", "the broker answered READY with DISCONNECT")
        #expect(cluster.broker.standardError.contains("worker command from a key without the worker role"), "\(cluster.broker.standardError)")
    }

    @Test("a learner key for ada is forbidden bob's books and progress, through serve and through a separate worker; bob's data is unchanged")
    func learnerKeyIsForbiddenOtherLearners() throws {
        let keys = try Self.keys()
        let serveData = try TemporaryDirectory(), workerData = try TemporaryDirectory()
        defer { serveData.remove(); workerData.remove() }
        let serve = try CurveServer(keys: keys, data: serveData.path)
        try Self.expectLearnerConfined(endpoint: serve.endpoint, keys: keys)
        let cluster = try Cluster(keys: keys, data: workerData.path, services: ["books", "progress", "catalog"])
        try Self.expectLearnerConfined(endpoint: cluster.endpoint, keys: keys)
    }

    /// Bob's book and progress, created by an app key, survive every attempt of ada's key.
    static func expectLearnerConfined(endpoint: String, keys: CurveKeys) throws {
        func call(_ key: String, _ service: String, _ body: String) throws -> String {
            try CurveEndToEndTests.peer("call", endpoint, keys: keys, as: key, [service, body])
        }
        let created = try call("app", "books", #"{"op":"create","learner":"bob","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        let reply = try JSONSerialization.jsonObject(with: Data(created.utf8)) as? [String: Any]
        let id = try #require(((reply?["result"] as? [String: Any])?["book"] as? [String: Any])?["id"] as? String, "\(created)")
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let progressRead = #"{"op":"get","learner":"bob","course":"\#(course.id)"}"#
        let progressBefore = try call("app", "progress", progressRead)
        let attempts = [
            ("books", #"{"op":"get","learner":"bob","id":"\#(id)"}"#),
            ("books", #"{"op":"update","learner":"bob","id":"\#(id)","title":"Defaced"}"#),
            ("books", #"{"op":"delete","learner":"bob","id":"\#(id)"}"#),
            ("books", #"{"op":"list","learner":"bob"}"#),
            ("progress", #"{"op":"mark_watched","learner":"bob","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#),
            ("progress", #"{"op":"begin_course","learner":"bob","course":"\#(course.id)"}"#),
        ]
        for (service, body) in attempts {
            let answer = try call("ada-phone", service, body)
            #expect(answer.contains(#""code":"forbidden""#), "\(service) \(body): \(answer)")
        }
        #expect(try call("ada-phone", "books", #"{"op":"list","learner":"ada"}"#).contains(#""ok":true"#))
        let book = try call("app", "books", #"{"op":"get","learner":"bob","id":"\#(id)"}"#)
        #expect(book.contains(#""title":"Dune""#) && book.contains(#""version":1"#), "\(book)")
        #expect(try call("app", "progress", progressRead) == progressBefore)
    }

    @Test("a dashboard key subscribes and snapshots but is forbidden the services; an admin key may run lyceum status, an app key may not")
    func dashboardAndAdminKeys() throws {
        let keys = try Self.keys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let serve = try CurveServer(keys: keys, data: data.path)
        let call = try CurveEndToEndTests.peer("call", serve.endpoint, keys: keys, as: "dashboard", ["catalog", #"{"op":"list_courses","limit":1}"#])
        #expect(call.contains("forbidden"), "\(call)")
        #expect(try CurveEndToEndTests.peer("snapshot", serve.snapshotEndpoint, keys: keys, as: "dashboard", []).hasPrefix("reply"))
        let subscriber = try CurveEndToEndTests.subscriber(serve.eventsEndpoint, keys: keys, as: "dashboard", seconds: 20)
        defer { subscriber.stop() }
        #expect(eventually {
            _ = try? CurveEndToEndTests.peer("call", serve.endpoint, keys: keys, as: "app", ["books", CurveEndToEndTests.create])
            return subscriber.lines.contains { $0.hasPrefix("message books/") }
        })
        let admin = try LyceumProcess.run(["status", "--broker", serve.endpoint] + keys.client("admin"))
        #expect(admin.status == 0 && admin.stdout.contains("services"), "\(admin.stdout)\(admin.stderr)")
        let app = try LyceumProcess.run(["status", "--broker", serve.endpoint] + keys.client("app"))
        #expect(app.status == 1 && (app.stdout + app.stderr).contains("forbidden"), "\(app.status) \(app.stdout)\(app.stderr)")
    }

    @Test("certificates written by libczmq's zcert_save work as a running serve's own key and as its clients' keys")
    func zcertCertificatesWork() throws {
        let keys = try CurveKeys()
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("SecurityTests/Helpers/zcert_peer.py").path
        for (name, role) in [("server", "admin"), ("app", "app")] {
            let save = try ChildProcess("/usr/bin/python3", [helper, "save", keys.publicPath(name), "role=\(role)"])
            #expect(save.waitForExit() == 0, "zcert_save \(name)")
            #expect(chmod(keys.secretPath(name), 0o600) == 0)
        }
        try FileManager.default.copyItem(atPath: keys.publicPath("app"), toPath: keys.authorized + "/app")
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let serve = try CurveServer(keys: keys, data: data.path)
        let call = try LyceumProcess.run(["call", "books", CurveEndToEndTests.create, "--broker", serve.endpoint] + keys.client("app"))
        #expect(call.status == 0 && call.stdout.contains(#""ok":true"#), "\(call.stdout)\(call.stderr)")
    }
}

/// Issue 16, the worker's snapshot ROUTER under CURVE: a CURVE server behind the worker's own
/// ZAP handler, advertised with its key, so that progress never sits on a plaintext port.
@Suite(.serialized)
struct CurveWorkerSnapshotTests {
    @Test("a CURVE worker advertises its snapshot endpoint with its key; only dashboard keys get a snapshot; the broker's dashboard shows progress under catalog titles")
    func snapshotsAndBrokerDashboardOverCurve() throws {
        let keys = try CurveRolesEndToEndTests.keys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let cluster = try CurveRolesEndToEndTests.Cluster(keys: keys, data: data.path, services: ["progress", "catalog"],
                                                         brokerArguments: ["--dashboard-port", String(port)])
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let write = #"{"op":"mark_watched","learner":"kim","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#
        #expect(try CurveEndToEndTests.peer("call", cluster.endpoint, keys: keys, as: "app", ["progress", write]).contains(#""ok":true"#))

        let heartbeat = try CurveEndToEndTests.peer("heartbeat", cluster.events, keys: keys, as: "dashboard", [])
        let advertised = heartbeat.split(separator: " ").map(String.init)
        try #require(advertised.count == 3 && advertised[2].count == 40, "no snapshot key advertised: \(heartbeat)")
        let (snapshot, key) = (advertised[1], "z85:" + advertised[2])
        func ask(as name: String?) throws -> String {
            try CurveRolesEndToEndTests.peer("snapshot", snapshot, keys: keys, as: name, server: key, [])
        }
        #expect(try ask(as: "dashboard").hasPrefix("reply"))
        #expect(try ask(as: "ada-phone") == "noreply")
        #expect(try ask(as: "app") == "noreply", "an app key is not in the worker's authorized-keys")
        #expect(try ask(as: nil) == "noreply")

        var stream = ""
        let shown = try eventually {
            stream = try Python.runShared("dashboard_http.py", ["get", String(port), "/events"]).stdout
            return stream.contains(#""course":"\#(course.id)","title":"\#(course.title)","started":1"#)
        }
        #expect(shown, "\(stream)\nbroker:\n\(cluster.broker.standardError)")
        #expect(!cluster.broker.standardError.contains("cannot repair"), "\(cluster.broker.standardError)")
    }

    @Test("a CURVE worker serving progress refuses to start without authorized-keys; authorized-keys needs CURVE")
    func curveWorkerNeedsAuthorizedKeys() throws {
        let keys = try CurveEndToEndTests.standardKeys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let endpoint = try freeLoopbackEndpoint()
        let bare = try LyceumProcess.run(["worker", "--broker", endpoint, "--service", "progress", "--data", data.path] + keys.client("worker"))
        #expect(bare.status == 2 && bare.stderr.contains("authorized-keys: required with curve-secret-key"), "\(bare.status) \(bare.stderr)")
        let plaintext = try LyceumProcess.run(["worker", "--broker", endpoint, "--service", "progress", "--data", data.path,
                                               "--authorized-keys", keys.authorized])
        #expect(plaintext.status == 2 && plaintext.stderr.contains("curve-secret-key: required with authorized-keys"), "\(plaintext.stderr)")
    }
}
