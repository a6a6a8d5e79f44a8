import Foundation
import LyceumTestSupport
@testable import LyceumServer
import Testing
import ZeroMQ

/// Issue 16, transport: real `lyceum` processes with CURVE on every socket, driven by the `lyceum`
/// CLI and by independent pyzmq peers (Clients/curve_peer.py).
@Suite(.serialized)
struct CurveEndToEndTests {
    /// Certificates in a temporary directory: `keys/NAME` and `keys/NAME_secret` for every key,
    /// and `authorized/NAME` for the authorised ones (the server's `authorized-keys`).
    /// The standard set: the server's key (not authorised: nobody connects with it) and one key per role.
    static func standardKeys() throws -> CurveKeys {
        try CurveKeys().make("server", role: "admin", authorize: false)
            .make("app", role: "app").make("app2", role: "app")
            .make("dashboard", role: "dashboard").make("dashboard2", role: "dashboard")
            .make("ada-phone", role: "learner", learners: "ada").make("worker", role: "worker")
            .make("stranger", role: "app", authorize: false)
    }

    /// Runs curve_peer.py `mode` against `endpoint`, as `key` (nil: plaintext), and returns its last line.
    static func peer(_ mode: String, _ endpoint: String, keys: CurveKeys, as key: String?, _ arguments: [String]) throws -> String {
        let credentials = key.map { [keys.publicPath("server"), keys.secretPath($0)] } ?? ["-", "-"]
        let run = try Python.run("curve_peer.py", [mode, endpoint] + credentials + arguments)
        #expect(run.status == 0, "curve_peer.py \(mode): \(run.stderr)")
        return run.stdout.split(separator: "\n").last.map(String.init) ?? ""
    }

    /// A subscriber of everything at `endpoint` as `key`, for `seconds`, printing a line per message.
    static func subscriber(_ endpoint: String, keys: CurveKeys, as key: String, seconds: Int) throws -> ChildProcess {
        try ChildProcess("/usr/bin/python3", [Python.path("curve_peer.py"), "subscribe", endpoint, keys.publicPath("server"), keys.secretPath(key), String(seconds)])
    }

    static let create = #"{"op":"create","learner":"ada","title":"Emma","author":"Jane Austen","genre":"Romance","rating":4}"#

    @Test("serve on CURVE: authorised keys are served and each event socket admits only its roles; plaintext and unknown keys get nothing and change nothing")
    func serveOnCurve() throws {
        let keys = try Self.standardKeys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try CurveServer(keys: keys, data: data.path)
        // The CLI with an app key: served.
        let call = try LyceumProcess.run(["call", "books", Self.create, "--broker", server.endpoint] + keys.client("app"))
        #expect(call.status == 0, "lyceum call: \(call.stderr)")
        #expect(call.stdout.contains(#""ok":true"#))
        // Plaintext and an unknown key: no reply, nothing applied.
        let mallory = #"{"op":"create","learner":"mallory","title":"Forged","author":"M","genre":"Poetry","rating":1}"#
        #expect(try Self.peer("call", server.endpoint, keys: keys, as: nil, ["books", mallory]) == "noreply")
        #expect(try Self.peer("call", server.endpoint, keys: keys, as: "stranger", ["books", mallory]) == "noreply")
        let list = try Self.peer("call", server.endpoint, keys: keys, as: "app", ["books", #"{"op":"list","learner":"mallory"}"#])
        #expect(list.contains(#""ok":true"#) && list.contains(#""books":[]"#), "mallory's books: \(list)")
        // Events and snapshots: a dashboard key yes, a learner key no.
        let dashboard = try Self.subscriber(server.eventsEndpoint, keys: keys, as: "dashboard", seconds: 4)
        defer { dashboard.stop() }
        let learner = try Self.subscriber(server.eventsEndpoint, keys: keys, as: "ada-phone", seconds: 4)
        defer { learner.stop() }
        #expect(eventually {
            _ = try? Self.peer("call", server.endpoint, keys: keys, as: "app", ["books", Self.create])
            return dashboard.lines.contains { $0.hasPrefix("message books/") }
        })
        #expect(learner.waitForLine("messages") == "messages 0 topics ")
        #expect(try Self.peer("snapshot", server.snapshotEndpoint, keys: keys, as: "dashboard", []).hasPrefix("reply"))
        #expect(try Self.peer("snapshot", server.snapshotEndpoint, keys: keys, as: "ada-phone", []) == "noreply")
        #expect(try Self.peer("snapshot", server.snapshotEndpoint, keys: keys, as: nil, []) == "noreply")
        #expect(server.process.standardError.contains("lacks subscribe_events for lyceum.events"))
    }

    @Test("a key revoked by SIGHUP is refused from then on, its event subscription is ended, and other clients continue")
    func revocationBySIGHUP() throws {
        let keys = try Self.standardKeys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try CurveServer(keys: keys, data: data.path)
        #expect(try Self.peer("call", server.endpoint, keys: keys, as: "app2", ["books", Self.create]).contains(#""ok":true"#))
        let kept = try Self.subscriber(server.eventsEndpoint, keys: keys, as: "dashboard", seconds: 30)
        defer { kept.stop() }
        let revoked = try Self.subscriber(server.eventsEndpoint, keys: keys, as: "dashboard2", seconds: 30)
        defer { revoked.stop() }
        #expect(eventually {
            _ = try? Self.peer("call", server.endpoint, keys: keys, as: "app", ["books", Self.create])
            return kept.lines.contains { $0.hasPrefix("message books/") } && revoked.lines.contains { $0.hasPrefix("message books/") }
        })
        try keys.revoke("app2")
        try keys.revoke("dashboard2")
        server.process.send(SIGHUP)
        #expect(eventually { server.process.standardError.contains("event endpoints bound again") })
        #expect(server.process.standardError.contains("removed=app2,dashboard2"))
        let before = (kept: kept.lines.count, revoked: revoked.lines.count)
        // New events reach the dashboard still authorised (it reconnected by itself), never the revoked one.
        #expect(eventually {
            _ = try? Self.peer("call", server.endpoint, keys: keys, as: "app", ["books", Self.create])
            return kept.lines.count > before.kept + 2
        })
        #expect(revoked.lines.filter { $0.hasPrefix("message books/") }.count
                == Array(revoked.lines.prefix(before.revoked)).filter { $0.hasPrefix("message books/") }.count)
        #expect(try Self.peer("call", server.endpoint, keys: keys, as: "app2", ["books", Self.create]) == "noreply")
        #expect(try Self.peer("call", server.endpoint, keys: keys, as: "app", ["books", Self.create]).contains(#""ok":true"#))
    }

    @Test("a reload that cannot read the key directory keeps the old keys")
    func failedReloadKeepsKeys() throws {
        let keys = try Self.standardKeys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try CurveServer(keys: keys, data: data.path)
        try FileManager.default.moveItem(atPath: keys.authorized, toPath: keys.authorized + ".gone")
        server.process.send(SIGHUP)
        #expect(eventually { server.process.standardError.contains("key reload failed; the running keys stay") })
        #expect(try Self.peer("call", server.endpoint, keys: keys, as: "app", ["books", Self.create]).contains(#""ok":true"#))
    }

    @Test("over CURVE, ordinary requests totalling far more than max-input-bytes are never cut; one endless message still is")
    func byteBudgetsUnderCurve() throws {
        let keys = try Self.standardKeys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try CurveServer(keys: keys, data: data.path, arguments: ["--max-input-bytes", String(64 << 10)])
        // 3000 requests of 4 frames: about 500 KB on the wire, 8 times the budget; counted
        // without CURVE's 33 bytes a frame they would have left 396 KB "held".
        let get = #"{"op":"list","learner":"ada","limit":1}"#
        #expect(try Self.peer("many", server.endpoint, keys: keys, as: "app", ["books", get, "3000"]) == "replies 3000")
        #expect(!server.process.standardError.contains("input budget exceeded"))
        // One endless message, as far as a libzmq peer can make one: 60 frames of 1 MiB, which the
        // server's libzmq holds unread until the last arrives (a raw peer could stop before it).
        #expect(try Self.peer("bigmessage", server.endpoint, keys: keys, as: "app", ["60", String(1 << 20)]) == "sent")
        #expect(eventually { server.process.standardError.contains("connection cut: input budget exceeded") })
        #expect(try Self.peer("call", server.endpoint, keys: keys, as: "app", ["books", Self.create]).contains(#""ok":true"#))
    }

    @Test("broker and worker on CURVE end to end; only a worker key can publish into the forwarder")
    func brokerAndWorkerOnCurve() throws {
        let keys = try Self.standardKeys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let endpoint = try freeLoopbackEndpoint(), events = try freeLoopbackEndpoint(), forwarder = try freeLoopbackEndpoint()
        let broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", events, "--forwarder-endpoint", forwarder,
                                        "--curve-secret-key", keys.secretPath("server"), "--authorized-keys", keys.authorized])
        defer { broker.stop() }
        let worker = try LyceumProcess(["worker", "--broker", endpoint, "--forwarder-endpoint", forwarder, "--data", data.path,
                                        "--service", "books"] + keys.client("worker"))
        defer { worker.stop() }
        #expect(eventually {
            (try? Self.peer("call", endpoint, keys: keys, as: "app", ["books", Self.create]))?.contains(#""ok":true"#) == true
        }, "broker: \(broker.standardError)\nworker: \(worker.standardError)")
        let dashboard = try Self.subscriber(events, keys: keys, as: "dashboard", seconds: 20)
        defer { dashboard.stop() }
        #expect(eventually {
            _ = try? Self.peer("call", endpoint, keys: keys, as: "app", ["books", Self.create])
            return dashboard.lines.contains { $0.hasPrefix("message books/") }
        }, "the worker's events did not reach the dashboard through the forwarder")
        #expect(try Self.peer("publish", forwarder, keys: keys, as: "app", ["forgery/app", "2"]).hasPrefix("published"))
        #expect(try Self.peer("publish", forwarder, keys: keys, as: "worker", ["forgery/worker", "2"]).hasPrefix("published"))
        #expect(eventually { dashboard.lines.contains("message forgery/worker") })
        #expect(!dashboard.lines.contains("message forgery/app"))
        #expect(broker.standardError.contains("lacks publish_events for lyceum.forwarder"))
    }

    @Test("protected mode: a plaintext bind other hosts can reach is refused unless --insecure; CURVE settings are checked before start")
    func protectedModeAndSettingChecks() throws {
        let keys = try Self.standardKeys()
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let exposed = try LyceumProcess.run(["serve", "--data", data.path, "--endpoint", "tcp://0.0.0.0:\(port)"])
        #expect(exposed.status == 2)
        #expect(exposed.stderr.contains("refusing to bind tcp://0.0.0.0:\(port) without CURVE"))
        #expect(exposed.stderr.contains("curve-secret-key and authorized-keys") && exposed.stderr.contains("--insecure"))
        let events = try LyceumProcess.run(["broker", "--events-endpoint", "tcp://*:\(port)"])
        #expect(events.status == 2 && events.stderr.contains("--events-endpoint"), "\(events.stderr)")
        let allowed = try LyceumProcess(["serve", "--data", data.path, "--endpoint", "tcp://0.0.0.0:\(port)", "--insecure",
                                         "--events-endpoint", "none"])
        defer { allowed.stop() }
        #expect(eventually { allowed.standardError.contains("broker listening") }, "\(allowed.standardError)")
        #expect(allowed.signal(SIGTERM) == 0)

        let secret = ["--curve-secret-key", keys.secretPath("server")]
        let noDirectory = try LyceumProcess.run(["serve", "--data", data.path, "--endpoint", "tcp://127.0.0.1:\(port)"] + secret)
        #expect(noDirectory.status == 2 && noDirectory.stderr.contains("authorized-keys: required with curve-secret-key"))
        let noServerKey = try LyceumProcess.run(["call", "books", "{}"] + secret)
        #expect(noServerKey.status == 2 && noServerKey.stderr.contains("curve-server-key: required with curve-secret-key"))
        chmod(keys.secretPath("server"), 0o640)
        let exposedSecret = try LyceumProcess.run(["broker", "--authorized-keys", keys.authorized] + secret)
        #expect(exposedSecret.status == 2 && exposedSecret.stderr.contains("curve-secret-key \(keys.secretPath("server"))"), "\(exposedSecret.stderr)")
    }
}

/// `lyceum serve` with CURVE: the server key of ``CurveEndToEndTests/Keys`` and its authorised
/// directory, on free loopback ports; waits until it answers an app key.
final class CurveServer {
    let endpoint: String
    let eventsEndpoint: String
    let snapshotEndpoint: String
    let process: LyceumProcess

    init(keys: CurveKeys, data: String, arguments: [String] = []) throws {
        endpoint = try freeLoopbackEndpoint()
        eventsEndpoint = try freeLoopbackEndpoint()
        snapshotEndpoint = try freeLoopbackEndpoint()
        process = try LyceumProcess([
            "serve", "--endpoint", endpoint, "--events-endpoint", eventsEndpoint, "--snapshot-endpoint", snapshotEndpoint, "--data", data,
            "--curve-secret-key", keys.secretPath("server"), "--authorized-keys", keys.authorized,
        ] + arguments)
        let endpoint = endpoint
        let ready = eventually {
            (try? CurveEndToEndTests.peer("call", endpoint, keys: keys, as: "app", ["catalog", #"{"op":"list_courses","limit":1}"#]))?
                .contains(#""ok":true"#) == true
        }
        try #require(ready, "lyceum serve with CURVE did not answer; stderr:\n\(process.standardError)")
    }

    deinit { process.stop() }
}

@Suite("Protected mode's loopback rule")
struct ProtectedModeTests {
    @Test("only what this host alone can reach counts as loopback; names other than localhost and lo are not resolved")
    func loopbackEndpoints() {
        for endpoint in ["tcp://127.0.0.1:5555", "tcp://127.9.8.7:1", "tcp://[::1]:5555", "tcp://::1:5555", "tcp://localhost:5555",
                         "tcp://lo:5555", "ipc:///tmp/lyceum", "inproc://events"] {
            #expect(ProtectedMode.isLoopback(endpoint), "\(endpoint)")
        }
        for endpoint in ["tcp://*:5555", "tcp://0.0.0.0:5555", "tcp://[::]:5555", "tcp://10.0.0.1:5555", "tcp://eth0:5555",
                         "tcp://broker.example:5555", "tcp://127.0.0.1.example:5555", "tcp://1270.0.0.1:5", "pgm://eth0;239.192.1.1:5555"] {
            #expect(!ProtectedMode.isLoopback(endpoint), "\(endpoint)")
        }
    }
}
