import Foundation
import LyceumTestSupport
import Testing

/// `lyceum partitions rebalance` with replicated partitions, as real processes (issue 25): every
/// leadership of six partitions is first moved to w1, then `rebalance` hands them over until
/// each of the three workers leads within one of the mean, while a writer goes on.
@Suite(.serialized, .offTheCooperativePool) struct ReplicatedRebalanceEndToEndTests {
    @Test func rebalanceSpreadsTheLeadershipsOverTheWorkersUnderWrites() throws {
        // The workers' own balance off: this is the command's test, and the balance would undo
        // the uneven start it needs (LeadershipBalanceEndToEndTests tests the balance).
        let cluster = try Deployment.replicated(partitions: 6, workerArguments: ["--leader-balance-interval", "0"])
        let writer = Writer(endpoint: cluster.endpoint)
        defer { writer.stop() }
        try #require(eventually { writer.count >= 50 }, "no writes acknowledged")

        // All led by w1 first, so that the rebalance has work whichever replicas won the campaigns.
        for (partition, leader) in try leaders(cluster) where leader != "w1" {
            let moved = try LyceumProcess.run([
                "partitions", "move", String(partition), "--to", "w1", "--leadership", "--service", "books", "--broker", cluster.endpoint,
            ])
            try #require(moved.status == 0, "\(moved.stdout)\n\(moved.stderr)\n\(cluster.logs)")
        }
        var led: [Int: String] = [:]
        try #require(eventually {
            led = try leaders(cluster)
            return led.count == 6 && led.values.allSatisfy { $0 == "w1" }
        }, "\(led)\n\(cluster.logs)")

        let rebalanced = try LyceumProcess.run(
            ["partitions", "rebalance", "--service", "books", "--broker", cluster.endpoint], timeout: .seconds(600))
        try #require(rebalanced.status == 0, "\(rebalanced.stdout)\n\(rebalanced.stderr)\n\(cluster.logs)")
        print(rebalanced.stdout)
        #expect(rebalanced.stdout.contains("books: leaderships before: w1 6, w2 0, w3 0"), "\(rebalanced.stdout)")
        #expect(rebalanced.stdout.contains("books: leaderships after: w1 2, w2 2, w3 2"), "\(rebalanced.stdout)")
        try #require(eventually {
            led = try leaders(cluster)
            let counts = Dictionary(grouping: led.values, by: { $0 }).mapValues(\.count)
            return led.count == 6 && ["w1", "w2", "w3"].allSatisfy { abs((counts[$0] ?? 0) - 2) <= 1 }
        }, "\(led)\n\(cluster.logs)")

        let before = writer.count
        try #require(eventually { writer.count >= before + 50 }, "no write acknowledged after the rebalance:\n\(cluster.logs)")
        writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)

        let again = try LyceumProcess.run(["partitions", "rebalance", "--service", "books", "--broker", cluster.endpoint])
        #expect(again.status == 0 && again.stdout.contains("leaderships balanced"), "\(again.stdout)\n\(again.stderr)")
    }

    /// Each partition's leader as `lyceum status --json` reports it (partitions without one left out).
    private func leaders(_ cluster: Deployment) throws -> [Int: String] {
        let status = try LyceumProcess.run(["status", "--broker", cluster.endpoint, "--partitions", String(cluster.partitions ?? 1), "--json"])
        try #require(status.status == 0, "\(status.stderr)")
        let table = (try parse(Array(status.stdout.utf8))["partitions"] as? [String: Any])?["table"] as? [[String: Any]] ?? []
        var leaders: [Int: String] = [:]
        for row in table where row["service"] as? String == "books" {
            if let partition = row["partition"] as? Int, let leader = row["leader"] as? String { leaders[partition] = leader }
        }
        return leaders
    }
}
