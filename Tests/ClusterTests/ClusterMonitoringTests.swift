import Foundation
import LyceumTestSupport
import Testing

/// Issue 27, item 5: the cluster's monitoring host m1 runs Debian's `prometheus`, which scrapes
/// every Lyceum process on the other hosts with the metrics token and evaluates
/// deploy/prometheus/lyceum-alerts.yml as shipped (its `for: 1m` included; only the scrape and
/// evaluation interval is shortened, to 1 s). What the test reads is what an operator's
/// Prometheus says through its HTTP API. A test of ClusterTests' serialized suite, so that no
/// two clusters run at once.
extension ClusterTests {
    /// Why the monitoring test cannot run here, or `nil` when it can.
    static let monitoringMissing: String? = NetnsCluster.partitionedClusterMissing
        ?? (FileManager.default.isExecutableFile(atPath: "/usr/bin/prometheus") ? nil : "needs Debian's prometheus (scripts/ensure-deps.sh test)")

    /// Kills worker host w1 and follows `LyceumPartitionWithoutWorker` for w1's partitions through
    /// Prometheus's `/api/v1/alerts`: pending, firing, then gone once w1 is started again. The
    /// timeline is printed (how long each step took here), never asserted.
    @Test(.enabled(if: monitoringMissing == nil, Comment(rawValue: monitoringMissing ?? "")))
    func aKilledWorkerHostFiresThePartitionAlertWhichResolvesWhenItIsBack() throws {
        let cluster = try NetnsCluster(partitions: 3, heartbeatMilliseconds: 500, scrapeIntervalSeconds: 1)
        defer { cluster.down() }
        let prometheus = try #require(cluster.environment["NETNS_PROMETHEUS"])
        let w1 = Set(cluster.partitions(of: "w1").flatMap { ["books.p\($0)", "progress.p\($0)"] })
        // Every process of the cluster is scraped with the token: 2 brokers, 2 workers on each of 3 hosts.
        var targets: [[String: Any]] = []
        let allUp = PrometheusAPI.poll(minutes: 2) {
            targets = try PrometheusAPI.data(cluster, prometheus, "targets")["activeTargets"] as? [[String: Any]] ?? []
            return targets.count == 8 && targets.allSatisfy { $0["health"] as? String == "up" }
        }
        try #require(allUp, "not every target was scraped: \(targets.map { "\($0["scrapeUrl"] ?? "") \($0["health"] ?? "") \($0["lastError"] ?? "")" })")
        #expect(try PrometheusAPI.partitionAlerts(cluster, prometheus).isEmpty)

        let killed = ContinuousClock.now
        try #require(try cluster.run("kill", ["w1"]).succeeded)
        var seen: [String: String] = [:]
        var pending: Duration?, firing: Duration?
        let fired = PrometheusAPI.poll(minutes: 5) {
            seen = try PrometheusAPI.partitionAlerts(cluster, prometheus)
            if pending == nil, !seen.isEmpty { pending = ContinuousClock.now - killed }
            if Set(seen.filter { $0.value == "firing" }.keys) == w1 { firing = ContinuousClock.now - killed }
            return firing != nil
        }
        try #require(fired, "the alert never fired for \(w1.sorted()); last seen: \(seen)\n\(cluster.logs)")
        #expect(Set(seen.keys) == w1, "alerts for partitions w1 does not hold: \(seen)")

        let restarting = ContinuousClock.now - killed
        let started = try cluster.run("start", ["w1"])
        try #require(started.succeeded, "w1 did not come back: \(started)\n\(cluster.logs)")
        let back = ContinuousClock.now - killed
        var resolved: Duration?
        let cleared = PrometheusAPI.poll(minutes: 5) {
            seen = try PrometheusAPI.partitionAlerts(cluster, prometheus)
            if seen.isEmpty { resolved = ContinuousClock.now - killed }
            return resolved != nil
        }
        #expect(cleared, "the alert stayed after w1 came back: \(seen)")
        func seconds(_ duration: Duration?) -> String { duration.map { String(format: "%.1f", Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) } ?? "-" }
        print("""
            LyceumPartitionWithoutWorker for \(w1.sorted().joined(separator: ",")) (scrape and evaluation every 1 s, heartbeat 500 ms, for: 1m), \
            seconds after kill -9 of w1: pending \(seconds(pending)), firing \(seconds(firing)), restart \(seconds(restarting)), \
            w1 registered again \(seconds(back)), resolved \(seconds(resolved))
            """)
    }
}

/// What the tests ask of m1's Prometheus, through its HTTP API.
enum PrometheusAPI {
    /// The partition alerts Prometheus has active, by their `service` label: `pending` or `firing`.
    static func partitionAlerts(_ cluster: NetnsCluster, _ prometheus: String) throws -> [String: String] {
        var alerts: [String: String] = [:]
        for alert in try data(cluster, prometheus, "alerts")["alerts"] as? [[String: Any]] ?? [] {
            let labels = alert["labels"] as? [String: String] ?? [:]
            guard labels["alertname"] == "LyceumPartitionWithoutWorker", let service = labels["service"] else { continue }
            alerts[service] = alert["state"] as? String
        }
        return alerts
    }

    /// The `data` of Prometheus's `GET /api/v1/<path>`, asked from m1 (where it listens).
    static func data(_ cluster: NetnsCluster, _ prometheus: String, _ path: String) throws -> [String: Any] {
        let result = try cluster.run("exec", ["m1", "curl", "-sf", "--max-time", "10", "\(prometheus)/api/v1/\(path)"], timeout: .seconds(30))
        guard result.succeeded, let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
              object["status"] as? String == "success", let data = object["data"] as? [String: Any]
        else { throw ClusterError(what: "GET /api/v1/\(path)", result: result) }
        return data
    }

    /// Asks `condition` until it holds or `minutes` pass (a hang limit).
    static func poll(minutes: Int, _ condition: () throws -> Bool) -> Bool {
        // A condition that throws (Prometheus not answering yet) has not held yet.
        eventually(timeout: .seconds(60 * minutes)) { (try? condition()) == true }
    }
}
