import Foundation
import LyceumTestSupport
import Testing

/// Hostile peers against `lyceum serve`'s per-connection limits (issue 14 findings 3a, 3c, 5):
/// each attacker is an independent Python process; after each, the server still answers.
@Suite(.serialized)
struct ConnectionBudgetTests {
    @Test func anIncompleteMultipartMessageIsCutAndMemoryStaysBounded() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path, arguments: ["--max-input-bytes", String(8 << 20)])
        let before = try residentBytes(server)
        let (host, port) = hostAndPort(server.endpoint)
        let attack = try Python.run("wire_attacker.py", ["partial", host, port, "512"])
        let words = attack.stdout.split(separator: " ")
        #expect(words.first == "cut", "the attacker was not cut: \(attack.stdout) \(attack.stderr)")
        let sent = Int(words.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        #expect(sent < 128 << 20, "\(sent) bytes were sent before the cut")
        let grown = try residentBytes(server) - before
        #expect(grown < 64 << 20, "the server's RSS grew by \(grown >> 20) MiB")
        try expectServing(server)
        #expect(server.process.standardError.contains("input budget exceeded"))
    }

    @Test func aClientThatReadsNoRepliesIsCutPastTheOutputBudgetWhileOthersAreServed() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let metricsPort = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--max-output-bytes", String(1 << 20), "--metrics-port", String(metricsPort)])
        let review = String(repeating: "a long review ", count: 250)
        for index in 0..<30 {
            let create = #"{"op":"create","learner":"big","title":"Book \#(index)","author":"A","genre":"Poetry","rating":3,"review":"\#(review)"}"#
            try #require(try server.call("books", create).isOK)
        }
        let before = try residentBytes(server)
        // About 100 KB a reply: 200 of them are 20 times the budget.
        let attacker = try ChildProcess("/usr/bin/python3", [Python.path("wire_attacker.py"), "unread", server.endpoint, "200",
                                                             #"{"op":"list","learner":"big","limit":100}"#])
        defer { attacker.stop() }
        #expect(attacker.waitForLine("sent") != nil)
        try expectServing(server)
        #expect(eventually { server.process.standardError.contains("connection cut: output budget exceeded") })
        // Published with the broker's snapshot at its next housekeeping pass. At least one: the
        // attacker's DEALER reconnects by itself, and what it still had to send can earn it a second cut.
        #expect(try eventually { try Metrics.scrape(port: metricsPort).value("lyceum_broker_connections_cut_total", ["reason": "output"]) >= 1 })
        try expectServing(server)
        let grown = try residentBytes(server) - before
        #expect(grown < 64 << 20, "the server's RSS grew by \(grown >> 20) MiB")
    }

    @Test func connectionsBeyondTheLimitAreRefusedWithoutSpinningAndClientsAreServed() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        // 1024 soft and hard, so that raising the soft limit cannot help: max-connections is
        // lowered to fit, 1024 - 256.
        let server = try Deployment.serve(data: data.path, descriptorLimit: 1024)
        #expect(server.process.standardError.contains("max-connections lowered to fit the descriptor limit"))
        let (host, port) = hostAndPort(server.endpoint)
        let idle = try ChildProcess("/usr/bin/python3", [Python.path("wire_attacker.py"), "idle", host, port, "1100"])
        defer { idle.stop() }
        #expect(idle.waitForLine("open 1100") != nil)
        var closed = 0
        let refused = eventually {
            idle.send(line: "count")
            let line = idle.waitForLine("closed", count: idle.lines.filter { $0.hasPrefix("closed") }.count + 1) ?? ""
            closed = Int(line.split(separator: " ").last ?? "") ?? 0
            return closed >= 1100 - (1024 - 256)
        }
        #expect(refused, "only \(closed) of 1100 idle connections were refused")
        // A new client gets its reply: the oldest silent connection makes room for it.
        try expectServing(server)
        let cpu = try cpuShare(server, over: .seconds(2))
        #expect(cpu < 0.5, "the server used \(Int(cpu * 100))% of a core while the connections idled")
    }

    // MARK: Helpers

    private func expectServing(_ server: Deployment) throws {
        let created = try server.call("books", #"{"op":"create","learner":"ada","title":"Emma","author":"Jane Austen","genre":"Romance","rating":4}"#)
        #expect(created.isOK)
        let id = (created.result["book"] as? [String: Any])?["id"] as? String ?? ""
        #expect(try server.call("books", #"{"op":"get","learner":"ada","id":"\#(id)"}"#).isOK)
    }

    private func hostAndPort(_ endpoint: String) -> (String, String) {
        let address = endpoint.replacingOccurrences(of: "tcp://", with: "")
        let colon = address.lastIndex(of: ":")!
        return (String(address[..<colon]), String(address[address.index(after: colon)...]))
    }

    /// The server's resident memory (`VmRSS`).
    private func residentBytes(_ server: Deployment) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return (Int(line.split(separator: " ")[1]) ?? 0) * 1024
    }

    /// The share of one core the server used over `interval` (user + system time).
    private func cpuShare(_ server: Deployment, over interval: Duration) throws -> Double {
        func ticks() throws -> Int {
            let stat = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/stat", encoding: .utf8)
            // Fields after the parenthesised name; utime and stime are the 14th and 15th.
            let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
            return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        }
        let start = try ticks()
        Thread.sleep(forTimeInterval: Double(interval.components.seconds))
        return Double(try ticks() - start) / Double(sysconf(Int32(_SC_CLK_TCK))) / Double(interval.components.seconds)
    }
}
