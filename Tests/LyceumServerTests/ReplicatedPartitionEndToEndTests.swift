import Foundation
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// Replicated partitions as real processes on loopback (issue 25, protocol/replication.md): a
/// real etcd, one `lyceum broker`, and three `lyceum worker`s with `replicas 3` holding the same
/// partition of books. A writer creates books one at a time through the broker, retrying each
/// with its `request_id` until acknowledged; the leader's process is killed (SIGKILL). Every
/// acknowledged book is then read back through the broker, and none was applied twice.
@Suite(.serialized, .offTheCooperativePool) struct ReplicatedPartitionEndToEndTests {
    /// One partition: every learner's books are in `books.p0`.
    static let partitions = 1

    @Test func theLeadersProcessIsKilledUnderWritesAndNoAcknowledgedWriteIsLostOrDoubled() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let endpoint = try freeLoopbackEndpoint()
        let forwarder = try freeLoopbackEndpoint()
        let broker = try LyceumProcess([
            "broker", "--endpoint", endpoint, "--forwarder-endpoint", forwarder, "--events-endpoint", try freeLoopbackEndpoint(),
            "--partitions", String(Self.partitions), "--unknown-service-timeout", "10000",
        ])
        defer { broker.stop() }
        var workers: [String: LyceumProcess] = [:]
        defer { for worker in workers.values { worker.stop() } }
        for node in ["w1", "w2", "w3"] {
            let root = data.path + "/" + node
            let initialized = try LyceumProcess.run(["partitions", "init", "--data", root, "--partitions", String(Self.partitions), "--own", "0", "--service", "books"])
            try #require(initialized.status == 0, "\(initialized.stderr)")
            // Ports base + k × partitions + N: books is the second journaled service (k = 1).
            let base = try freeLoopbackPorts(count: 2)
            workers[node] = try LyceumProcess([
                "worker", "--broker", endpoint, "--forwarder-endpoint", forwarder, "--partitions", String(Self.partitions), "--node", node,
                "--data", root, "--service", "books", "--sessions", "2",
                "--replicas", "3", "--etcd-endpoint", etcd.endpoint, "--replication-endpoint", "tcp://127.0.0.1:\(base)",
                "--lease-ttl", "2", "--lease-keep-alive", "500", "--lease-retry", "700",
            ])
        }
        try waitUntilServing(["books.p0"], at: endpoint) { workers.map { "\($0.key):\n\($0.value.standardError)" }.joined(separator: "\n") }

        // The writer: one create at a time, each retried with its request_id until acknowledged.
        let acknowledged = Mutex<[(title: String, at: ContinuousClock.Instant)]>([])
        let stop = Atomic(false)
        let writer = Thread {
            let context = try! Context()
            var number = 0
            while !stop.load(ordering: .relaxed) {
                number += 1
                let title = "book-\(number)"
                let body = #"{"op":"create","learner":"ada","title":"\#(title)","author":"A","genre":"Mystery","rating":3,"request_id":"\#(title)"}"#
                while !stop.load(ordering: .relaxed) {
                    let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(2), attempts: 1), context: context)
                    defer { client.close() }
                    if let reply = try? client.call("books", body: [Array(body.utf8)]), reply.count == 1, let parsed = try? parse(reply[0]), parsed.isOK {
                        acknowledged.withLock { $0.append((title, .now)) }
                        break
                    }
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
        }
        writer.start()
        defer { stop.store(true, ordering: .relaxed) }
        try #require(eventually { acknowledged.withLock { $0.count } >= 100 }, "no writes acknowledged")

        // The leader: the worker whose log says it leads books.p0.
        let leader = try #require(workers.first { $0.value.standardError.contains("partition led") }?.key)
        let killedAfter = acknowledged.withLock { $0.count }
        let killedAt = ContinuousClock.now
        _ = workers[leader]?.signal(SIGKILL)
        workers[leader] = nil
        try #require(eventually { acknowledged.withLock { $0.count } >= killedAfter + 100 }, "no write acknowledged after the kill")
        stop.store(true, ordering: .relaxed)
        while writer.isExecuting { Thread.sleep(forTimeInterval: 0.05) }

        let acks = acknowledged.withLock { $0 }
        let before = acks.last { $0.at < killedAt }
        let after = acks.first { $0.at > killedAt }
        if let before, let after {
            print("fail-over: \(after.at - before.at) from the last acknowledgement before the kill to the first after (\(acks.count) acknowledged)")
        }

        // Every acknowledged book is there, once.
        var titles: [String: Int] = [:]
        var cursor: String?
        repeat {
            let page = try call(endpoint, #"{"op":"list","learner":"ada","limit":100\#(cursor.map { #","cursor":"\#($0)""# } ?? "")}"#)
            try #require(page.isOK, "\(page)")
            for book in page.result["books"] as? [[String: Any]] ?? [] {
                titles[book["title"] as? String ?? "", default: 0] += 1
            }
            cursor = page.result["next_cursor"] as? String
        } while cursor != nil
        let missing = acks.filter { titles[$0.title] == nil }.map(\.title)
        let doubled = titles.filter { $0.value > 1 }.map(\.key)
        #expect(missing.isEmpty, "acknowledged and lost: \(missing.prefix(10))")
        #expect(doubled.isEmpty, "applied twice: \(doubled.prefix(10))")
    }

    private func call(_ endpoint: String, _ json: String) throws -> [String: Any] {
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(10), attempts: 3), context: try Context())
        defer { client.close() }
        let reply = try client.call("books", body: [Array(json.utf8)])
        try #require(reply.count == 1)
        return try parse(reply[0])
    }
}
