import Foundation
import LyceumTestSupport
import Testing

/// Issue 28's walkthrough: after `eval "$(netns-cluster.sh env)"`, `lyceum watch` on the client
/// host, given nothing but its events endpoint, loads every worker host's state from the snapshot
/// endpoint its heartbeats advertise and shows a progress event made through the brokers. A test
/// of ClusterTests' serialized suite, so that no two clusters run at once.
extension ClusterTests {
    @Test(.enabled(if: NetnsCluster.partitionedClusterMissing == nil, Comment(rawValue: NetnsCluster.partitionedClusterMissing ?? "")))
    func watchOnTheClientHostWithTheEnvironmentsKeysShowsAnEventFromAWorkerHost() throws {
        let cluster = try NetnsCluster(partitions: Self.partitions, heartbeatMilliseconds: Self.heartbeat)
        defer { cluster.down() }
        let events = try #require(cluster.environment["NETNS_EVENTS"]?.split(separator: ",").first.map(String.init))
        let watch = try cluster.startAsOperator(on: "c1", ["lyceum", "watch", "--connect", events, "--no-snapshot", "--plain", "--limit", "1"])
        defer { watch.stop() }
        // One snapshot from each worker host's publisher, at the address its heartbeats advertise.
        let loaded = eventually(timeout: .seconds(60)) { watch.standardError.components(separatedBy: "loaded snapshot").count - 1 >= 3 }
        try #require(loaded, "watch loaded no snapshot from every worker host:\n\(watch.standardError)\n\(cluster.logs)")
        let call = try cluster.asOperator(on: "c1", ["lyceum", "call", "progress",
                                                     #"{"op":"mark_watched","learner":"watcher-1","course":"swiftui-essentials","lesson":"views-and-modifiers"}"#],
                                          timeout: .seconds(60))
        try #require(call.succeeded, "\(call)")
        #expect(watch.waitForExit(timeout: .seconds(60)) == 0, "\(watch.standardError)")
        #expect(watch.standardOutput.contains("learner=watcher-1"), "\(watch.standardOutput)")
    }
}
