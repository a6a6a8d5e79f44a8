import Foundation
import LyceumTestSupport
import Testing

/// A replicating worker's `/readyz` means "caught up on every replica held" (issue 35, item 5:
/// the Kubernetes probes, and a rolling restart's wait): three workers holding two partitions
/// of books, a writer retrying each create until acknowledged. Each worker is ready once its
/// replicas lead or follow a leader they are close behind; with etcd gone the leaderships end
/// and every worker says it waits for that condition (its broker registration unchanged); with
/// etcd back every worker is ready again, and every acknowledged write is there once.
@Suite(.serialized, .offTheCooperativePool) struct ReplicaReadinessEndToEndTests {
    static let caughtUp = "caught up on every replica held"

    /// Every worker's `/readyz` answer, by node.
    static func answers(_ cluster: Deployment) -> [String: HTTPExchange.Answer] {
        cluster.metricsPorts.compactMapValues { try? HTTPExchange.get("/readyz", port: $0) }
    }

    @Test func aWorkerIsReadyOnlyWhileEveryReplicaItHoldsIsCaughtUp() throws {
        let cluster = try Deployment.replicated(partitions: 2)
        let writer = Writer(endpoint: cluster.endpoint)
        defer { writer.stop() }

        var answers: [String: HTTPExchange.Answer] = [:]
        let ready = eventually {
            answers = Self.answers(cluster)
            return answers.count == 3 && answers.values.allSatisfy { $0.status == 200 }
        }
        #expect(ready, "\(answers)\n\(cluster.logs)")
        try #require(eventually { writer.count >= 10 }, "no writes acknowledged\n\(cluster.logs)")

        // No etcd: every lease lapses, so no replica leads or follows.
        let etcd = try #require(cluster.etcd)
        etcd.kill()
        let waiting = eventually {
            answers = Self.answers(cluster)
            return answers.count == 3 && answers.values.allSatisfy {
                $0.status == 503 && $0.body == "{\"status\":\"waiting\",\"waiting_for\":[\"\(Self.caughtUp)\"]}\n"
            }
        }
        #expect(waiting, "\(answers)\n\(cluster.logs)")
        // Liveness is another question: every worker still answers /healthz.
        for port in cluster.metricsPorts.values { #expect(try HTTPExchange.get("/healthz", port: port).status == 200) }

        try etcd.start()
        let readyAgain = eventually {
            answers = Self.answers(cluster)
            return answers.count == 3 && answers.values.allSatisfy { $0.status == 200 }
        }
        #expect(readyAgain, "\(answers)\n\(cluster.logs)")
        let before = writer.count
        try #require(eventually { writer.count >= before + 10 }, "no writes acknowledged after etcd returned\n\(cluster.logs)")
        writer.stop()
        try cluster.expectEveryAcknowledgedBookOnce(writer.acknowledged)
    }
}
