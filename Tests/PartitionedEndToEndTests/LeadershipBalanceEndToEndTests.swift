import Coordination
import Foundation
import LyceumTestSupport
import Testing

/// Leaderships spread by themselves (issue 35): three replicated workers holding all 16
/// partitions of books, a short `leader-balance-interval`, a writer retrying each create until
/// acknowledged. Whoever campaigned first leads most partitions at the start; the nodes hand
/// leaderships over until none leads more than ⌈16 / 3⌉ = 6. The busiest node is then killed (the
/// others lead everything) and started again: it gets its share back. Every acknowledged write
/// is there once. Counts from the leader keys in etcd, never times.
@Suite(.serialized, .offTheCooperativePool) struct LeadershipBalanceEndToEndTests {
    static let partitions = 16
    static let share = 6

    /// How many partitions of books each node leads, from the leader keys.
    static func leaderships(_ etcd: EtcdClient) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in (try? etcd.list(prefix: "lyceum/leader/books.").values) ?? [] {
            let node = String(decoding: entry.value, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
            counts[node, default: 0] += 1
        }
        return counts
    }

    /// Whether all partitions are led and no node of `nodes` leads more than its share or fewer than `least`.
    static func balanced(_ counts: [String: Int], nodes: Set<String>, least: Int = 0) -> Bool {
        counts.values.reduce(0, +) == partitions && Set(counts.keys) == nodes && counts.values.allSatisfy { (least...share).contains($0) }
    }

    @Test func leadershipsSpreadAfterAStartAndAfterAHostReturns() throws {
        let cluster = try Deployment.replicated(partitions: Self.partitions, workerArguments: ["--leader-balance-interval", "300"])
        let etcd = try EtcdClient(endpoints: [cluster.etcd!.endpoint])
        let writer = Writer(endpoint: cluster.endpoint)
        defer { writer.stop() }
        let nodes: Set<String> = ["w1", "w2", "w3"]

        var counts: [String: Int] = [:]
        let spread = eventually { counts = Self.leaderships(etcd); return Self.balanced(counts, nodes: nodes, least: 5) }
        print("leaderships after the start: \(counts.sorted { $0.key < $1.key })")
        #expect(spread, "\(counts)\n\(cluster.logs)")

        let victim = try #require(counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key)
        cluster.workers[victim]?.signal(SIGKILL)
        let takenOver = eventually { counts = Self.leaderships(etcd); return counts[victim] == nil && counts.values.reduce(0, +) == Self.partitions }
        print("leaderships with \(victim) killed: \(counts.sorted { $0.key < $1.key })")
        #expect(takenOver, "\(counts)\n\(cluster.logs)")

        try cluster.start(victim)
        let back = eventually { counts = Self.leaderships(etcd); return Self.balanced(counts, nodes: nodes, least: 5) }
        print("leaderships after \(victim) returned: \(counts.sorted { $0.key < $1.key })")
        #expect(back, "\(counts)\n\(cluster.logs)")
        #expect(cluster.workers[victim]?.standardError.contains("partition led") == true)

        try #require(eventually { writer.count >= 20 }, "no writes acknowledged")
        writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
    }
}
