import Foundation
import LyceumTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 27, items 1 and 2, against real `lyceum` processes: the metrics port on another
/// address needs a token (given in a file or a setting), `/metrics` checks it as Prometheus sends
/// it, `/healthz` and `/readyz` answer without it, and the port's bad input (no or a wrong token,
/// a huge header, a slow client) gets a clear refusal at a bounded cost.
@Suite(.serialized)
struct MetricsPortTests {
    static let token = "metrics-test-token-0123456789"

    /// A token file of mode 0600 in `directory`.
    static func tokenFile(in directory: TemporaryDirectory, mode: mode_t = 0o600) throws -> String {
        let path = directory.path + "/metrics-token"
        try (token + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test(arguments: ["serve", "broker", "worker"])
    func aNonLoopbackAddressWithoutATokenExits2NamingBothSettings(command: String) throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let run = try LyceumProcess.run([command, "--data", data.path, "--metrics-port", String(port), "--metrics-address", "0.0.0.0"]
                                        + (command == "worker" ? ["--broker", try freeLoopbackEndpoint()] : []))
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("--metrics-address") && run.stderr.contains("metrics-token") && run.stderr.contains("metrics-token-file"), "\(run.stderr)")
    }

    @Test func aTokenFileOthersCanReadOrBothWaysOfGivingTheTokenStopTheStart() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = String(try freeLoopbackPort())
        let open = try Self.tokenFile(in: data, mode: 0o644)
        let readable = try LyceumProcess.run(["serve", "--data", data.path, "--metrics-port", port, "--metrics-token-file", open])
        #expect(readable.status == 2 && readable.stderr.contains("--metrics-token-file") && readable.stderr.contains("chmod 600"), "\(readable)")
        #expect(!readable.stderr.contains(Self.token), "the token was echoed: \(readable.stderr)")
        chmod(open, 0o600)
        let both = try LyceumProcess.run(["serve", "--data", data.path, "--metrics-port", port, "--metrics-token-file", open, "--metrics-token", Self.token])
        #expect(both.status == 2 && both.stderr.contains("metrics-token-file") && both.stderr.contains("metrics-token is set too"), "\(both)")
        let missing = try LyceumProcess.run(["serve", "--data", data.path, "--metrics-port", port, "--metrics-token-file", data.path + "/none"])
        #expect(missing.status == 2 && missing.stderr.contains("cannot open"), "\(missing)")
        let config = try LyceumProcess.run(["config", "--metrics-token-file", open, "--metrics-address", "0.0.0.0", "--metrics-port", port])
        #expect(config.status == 0 && !config.stdout.contains(Self.token), "lyceum config showed the token: \(config)")
    }

    @Test func metricsNeedTheBearerTokenAndTheProbesDoNot() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--metrics-port", String(port), "--metrics-token-file", try Self.tokenFile(in: data)])
        for authorization in [nil, "Bearer wrong-token-0123456789abc", "Bearer " + Self.token.dropLast(), "Bearer " + Self.token + "x",
                              "Basic " + Self.token, "bearer " + Self.token, Self.token] {
            let answer = try HTTPExchange.get("/metrics", port: port, headers: authorization.map { ["Authorization: \($0)"] } ?? [])
            #expect(answer.status == 401, "\(authorization ?? "no header"): \(answer)")
            #expect(answer.head.contains("WWW-Authenticate: Bearer") && !answer.body.contains("lyceum_"), "\(answer)")
        }
        let scraped = try HTTPExchange.get("/metrics", port: port, headers: ["Authorization: Bearer " + Self.token])
        #expect(scraped.status == 200 && scraped.body.contains("lyceum_uptime_seconds"), "\(scraped)")
        let health = try HTTPExchange.get("/healthz", port: port)
        #expect(health.status == 200 && health.body == "{\"status\":\"alive\"}\n", "\(health)")
        let ready = try HTTPExchange.get("/readyz", port: port)
        #expect(ready.status == 200 && ready.body == "{\"status\":\"ready\"}\n", "\(ready)")
        #expect(try HTTPExchange.get("/other", port: port).status == 404)
        #expect(try HTTPExchange.exchange(Array("POST /metrics HTTP/1.1\r\n\r\n".utf8), port: port).status == 405)
        #expect(try server.call("books", HostilePeerOpsTests.createBook).isOK)
    }

    @Test func readyzWaitsForABrokerAsReady1DoesAndHealthzAnswersMeanwhile() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let brokerEndpoint = try freeLoopbackEndpoint()
        let worker = try LyceumProcess(["worker", "--broker", brokerEndpoint, "--data", data.path, "--service", "catalog",
                                        "--metrics-port", String(port), "--heartbeat-interval", "200", "--reconnect-initial", "100"])
        defer { worker.stop() }
        var waiting: HTTPExchange.Answer?
        // Started, and waiting for nothing but a broker (a loaded machine may first answer while
        // the worker's components are still starting: "started" is then also waited for).
        #expect(eventually {
            waiting = try? HTTPExchange.get("/readyz", port: port)
            return waiting?.status == 503 && waiting?.body.contains("\"started\"") == false
        }, "\(String(describing: waiting))\n\(worker.standardError)")
        #expect(waiting?.body == "{\"status\":\"waiting\",\"waiting_for\":[\"registered with a broker\"]}\n", "\(String(describing: waiting))")
        #expect(try HTTPExchange.get("/healthz", port: port).status == 200)

        let broker = try LyceumProcess(["broker", "--endpoint", brokerEndpoint, "--events-endpoint", "none"])
        defer { broker.stop() }
        #expect(eventually { (try? HTTPExchange.get("/readyz", port: port))?.status == 200 },
                "never ready:\n\(worker.standardError)\n\(broker.standardError)")
        broker.stop()
        // The broker gone, no session is accepted: the worker withdraws its readiness.
        #expect(eventually { (try? HTTPExchange.get("/readyz", port: port))?.status == 503 })
    }

    /// Requests whose headers never end, 1 MiB each on 64 connections at once, are answered
    /// 431 after 16 KiB each; the process's memory does not grow with what they send.
    @Test func hugeHeadersAreRefusedWith431AtABoundedCost() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--metrics-port", String(port), "--metrics-token", Self.token])
        let pid = server.process.processIdentifier
        _ = try HTTPExchange.get("/metrics", port: port, headers: ["Authorization: Bearer " + Self.token])
        let before = try Self.residentKilobytes(of: pid)
        let header = Array("GET /metrics HTTP/1.1\r\nX-Huge: ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        let answers = try (0..<64).map { _ in try HTTPExchange.exchange(header, port: port) }
        let after = try Self.residentKilobytes(of: pid)
        #expect(answers.allSatisfy { $0.status == 431 }, "\(answers.map(\.status))")
        #expect(answers.first?.body.contains("over 16384 bytes") == true, "\(String(describing: answers.first))")
        // 64 MiB were offered; at most 16 KiB of each request is ever held.
        #expect(after - before < 8 * 1024, "resident memory grew by \(after - before) KiB")
        #expect(try HTTPExchange.get("/metrics", port: port, headers: ["Authorization: Bearer " + Self.token]).status == 200)
    }

    /// A client sending a byte at a time is cut when `metrics-timeout` passes, unanswered, while
    /// scrapes go on being answered.
    @Test func aSlowClientIsCutAtTheTimeoutWhileScrapesAreAnswered() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--metrics-port", String(port), "--metrics-token", Self.token, "--metrics-timeout", "1000"])
        let slow = try connectToLoopback(port: port)
        defer { close(slow) }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET /metrics HTTP/1.1\r\nAuthorization: Bearer \(Self.token)\r\n\r\n".utf8)
        var sent = 0, received: [UInt8] = [], closed = false
        let deadline = ContinuousClock.now + .seconds(120)
        while !closed, ContinuousClock.now < deadline, sent < request.count - 1 {
            if send(slow, [request[sent]], 1, Int32(MSG_NOSIGNAL)) == 1 { sent += 1 } else { closed = true }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(slow, &buffer, buffer.count, 0)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { closed = true }
            if count > 0 { received += buffer[..<count] }
            if sent % 4 == 0 {
                #expect(try HTTPExchange.get("/metrics", port: port, headers: ["Authorization: Bearer " + Self.token]).status == 200)
            }
        }
        #expect(closed && received.isEmpty, "the slow client was not cut (sent \(sent) of \(request.count) bytes) or was answered")
        #expect(server.process.isRunning)
    }

    /// The resident set of process `pid`, in KiB.
    static func residentKilobytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(whereSeparator: \.isWhitespace)[1]))
    }
}
