import EventSubscription
import EventPublishing
import Foundation
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// A peer of the snapshot ROUTER that asks and never reads (issue 14, finding 3d): 400 requests
/// for a snapshot of about 600 KB once held every reply in `serve`'s memory.
@Suite(.serialized)
struct SnapshotFloodTests {
    static let learners = 1200
    /// What the flood may add to `serve`'s resident memory: with pages of 64 KiB and two unread
    /// replies per peer, a few pages; unbounded, 400 replies of the whole snapshot were hundreds of MB.
    static let allowedGrowth = 32 << 20

    @Test func aPeerAskingForSnapshotsWithoutReadingKeepsServeBoundedAndOthersAnswered() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--metrics-port", String(port), "--durability", "none"])
        let context = try Context()
        let client = Client(endpoint: server.endpoint, configuration: ClientConfiguration(timeout: .seconds(2), attempts: 1), context: context)
        defer { client.close() }
        // Learner ids of 120 characters: entries of about 500 bytes, a snapshot of about 600 KB.
        for index in 0..<Self.learners {
            let learner = "flood-\(index)-" + String(repeating: "x", count: 120 - "flood-\(index)-".count)
            let reply = try client.call("progress", body: [Array(#"{"op":"begin_course","learner":"\#(learner)","course":"swiftui-essentials"}"#.utf8)])
            try #require(try parse(reply[0]).isOK, "\(String(decoding: reply[0], as: UTF8.self))")
        }
        let pid = server.process.processIdentifier
        let baseline = try Self.residentBytes(of: pid)

        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients/snapshot_flood.py").path
        let peer = try ChildProcess("/usr/bin/python3", [script, server.snapshotEndpoint, "400"])
        defer { peer.stop() }
        try #require(peer.waitForLine("sent 400") != nil)
        // Every request handled, answered or dropped, before memory is measured.
        let handled = try eventually {
            let metrics = try Metrics.scrape(port: port)
            return metrics.value("lyceum_event_snapshots_total") + metrics.value("lyceum_event_snapshots_dropped_total") >= 400
        }
        let flooded = try Self.residentBytes(of: pid)
        let metrics = try Metrics.scrape(port: port)
        try #require(handled, "serve handled \(metrics.value("lyceum_event_snapshots_total")) of 400 snapshot requests; VmRSS \(flooded >> 20) MiB")
        print("snapshot flood: VmRSS \(baseline >> 10) KiB before, \(flooded >> 10) KiB after 400 unread requests (+\((flooded - baseline) >> 10) KiB);",
              "answered \(Int(metrics.value("lyceum_event_snapshots_total"))), dropped \(Int(metrics.value("lyceum_event_snapshots_dropped_total")))")
        #expect(flooded - baseline <= Self.allowedGrowth, "VmRSS grew by \((flooded - baseline) >> 20) MiB")

        // With the flood's connection still open, another subscriber gets the whole snapshot...
        let subscriber = try ProgressSubscriber(
            context: context, options: .init(eventsEndpoint: server.eventsEndpoint, snapshotEndpoint: server.snapshotEndpoint, snapshotTimeout: .seconds(5)))
        _ = try subscriber.synchronize()
        #expect(subscriber.entries.count == Self.learners)
        // ...and a write is answered within the client's 2 s.
        let created = try client.call("books", body: [Array(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#.utf8)])
        #expect(try parse(created[0]).isOK)
        #expect(server.process.isRunning && server.process.processIdentifier == pid)
    }

    /// The process's resident set (VmRSS), in bytes.
    static func residentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { throw POSIXError(.EINVAL) }
        return kilobytes << 10
    }
}
