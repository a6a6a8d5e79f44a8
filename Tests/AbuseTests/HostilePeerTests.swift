import Foundation
import LyceumTestSupport
import Testing

/// Issue 14, "Hostile peers": one attack per finding against the real processes, each followed
/// by the shared invariants (`Target.expectSurvived`) and the finding's own bound. Serialized:
/// the attacks measure memory and latency, and two at once on a 2-core machine would blur both.
@Suite(.serialized, .enabled(if: pythonHasZMQ, "needs Debian's python3-zmq (scripts/ensure-deps.sh test)"))
struct HostilePeerTests {
    @Test("1: peer-chosen routing ids equal to the broker's next automatic ones", .timeLimit(.minutes(3)))
    func routingIdCollision() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("routing_ids.py", against: target)
        try target.expectSurvived("routing ids", findings)
    }

    @Test("2: one 128 KiB+ subscription prefix to the broker's forwarder, then a disconnect", .timeLimit(.minutes(3)))
    func hugeSubscriptionPrefix() throws {
        let target = try Target.broker()
        let findings = try Attacker.run("subscription_crash.py", against: target)
        try target.expectSurvived("huge subscription prefix", findings)
    }

    @Test("3a: an endless multipart message over raw ZMTP", .timeLimit(.minutes(3)))
    func endlessMultipartMessage() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("endless_message.py", against: target, ["--seconds", "6"])
        try target.expectSurvived("endless multipart message", findings)
    }

    @Test("3b: many long subscription prefixes from one subscriber", .timeLimit(.minutes(3)))
    func subscriptionMemory() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("subscription_memory.py", against: target, ["--seconds", "2"])
        try target.expectSurvived("subscription memory", findings)
    }

    @Test("3c: large list replies that are never read", .timeLimit(.minutes(2)))
    func unreadListReplies() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("unread_lists.py", against: target, ["--seconds", "6"], limit: .seconds(90))
        try target.expectSurvived("unread list replies", findings)
    }

    @Test("3d: snapshot requests whose replies are never read", .timeLimit(.minutes(2)))
    func unreadSnapshots() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("unread_snapshots.py", against: target, ["--seconds", "3"], limit: .seconds(90))
        // Replies capped in bytes (paged): 1 MiB is this test's reading of "capped"; the table is larger.
        let replyBytes = findings["snapshot_bytes"] as? Int ?? 0
        #expect(replyBytes > 0 && replyBytes <= 1 << 20, "one 19-byte snapshot request got a \(replyBytes)-byte reply")
        try target.expectSurvived("unread snapshots", findings)
    }

    @Test("4: creates are answered while title-sorted lists of 60 KB titles are in flight", .timeLimit(.minutes(2)))
    func writeBehindReads() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("writes_behind_reads.py", against: target, ["--seconds", "4"], limit: .seconds(90))
        let latencies = findings["create_latencies_ms"] as? [Double] ?? []
        #expect(!latencies.isEmpty, "no create was answered")
        // How fast is a figure (about 1 s at most on an idle machine), not a bound.
        print("abuse write behind reads: create latencies (ms) \(latencies), the slowest \(latencies.max() ?? .nan)")
        try target.expectSurvived("write behind reads", findings)
    }

    @Test("5: 1,100 idle connections against a soft limit of 1,024 descriptors", .timeLimit(.minutes(3)))
    func descriptorExhaustion() throws {
        let target = try Target.serve(launcher: ["/usr/bin/prlimit", "--nofile=1024:4096", "--"])
        let findings = try Attacker.run("descriptors.py", against: target)
        #expect(findings["new_client_answered"] as? Bool == true, "a new client got no reply: \(findings.summary)")
        #expect(findings["metrics_ok"] as? Bool == true, "/metrics did not answer: \(findings.summary)")
        let cpu = findings["idle_cpu_fraction"] as? Double ?? 1
        #expect(cpu < 0.5, "the server used \(Int(cpu * 100))% of a core while the connections idled")
        try target.expectSurvived("descriptor exhaustion", findings)
    }

    @Test("6: a malformed-message flood in each dialect, a 1 MiB service name (7/MDP, RFC 18) and a 60 KB id", .timeLimit(.minutes(3)))
    func logAndReplyAmplification() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("log_flood.py", against: target, ["--seconds", "10"])
        let log = target.log()
        var (lines, longest, current) = (0, 0, 0)
        for byte in log {
            if byte == UInt8(ascii: "\n") { (lines, longest, current) = (lines + 1, max(longest, current), 0) } else { current += 1 }
        }
        // Bools and counts only in the expectations: a failing one prints what it captured.
        let countsSuppressed = log.range(of: Data("suppressed".utf8)) != nil
        print("abuse log flood: \(lines) log lines, \(log.count) bytes, longest line \(longest) bytes")
        #expect(lines <= 2_000, "\(lines) log lines for the flood")
        #expect(log.count <= 1 << 20, "\(log.count) bytes of log for the flood")
        #expect(countsSuppressed, "the log does not say how many warnings it suppressed")
        #expect(longest <= 4096, "a log line of \(longest) bytes")
        let replyBytes = findings["long_name_reply_bytes"] as? Int
        #expect(replyBytes != nil && replyBytes! <= 4096, "the reply to a 1 MiB service name: \(replyBytes.map { "\($0) bytes" } ?? "none")")
        let replyBytes18 = findings["long_name_reply_bytes_18"] as? Int
        #expect(replyBytes18 != nil && replyBytes18! <= 4096, "the RFC 18 reply to a 1 MiB service name: \(replyBytes18.map { "\($0) bytes" } ?? "none")")
        #expect(findings["long_id_echoed"] as? Bool == false, "the 60 KB id came back in full (\(findings["long_id_reply_bytes"] ?? "?") bytes)")
        try target.expectSurvived("log and reply amplification", findings)
    }

    @Test("7: /metrics under 500 idle connections and a byte-every-0.9-s client", .timeLimit(.minutes(3)))
    func metricsUnderSlowClients() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("metrics_slowloris.py", against: target)
        let scrapes = findings["scrapes"] as? [[String: Any]] ?? []
        #expect(scrapes.count == 5)
        print("abuse metrics under slow clients: scrapes took \(scrapes.map { "\($0["ms"] as? Double ?? .nan) ms" })")
        let failed = scrapes.filter { $0["ok"] as? Bool != true }
        #expect(failed.isEmpty, "\(failed.count) of \(scrapes.count) scrapes failed: \(scrapes)")
        try target.expectSurvived("metrics under slow clients", findings)
    }
}
