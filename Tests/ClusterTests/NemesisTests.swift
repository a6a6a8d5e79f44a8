import Foundation
import LyceumTestSupport
import Testing

/// Issue 36's randomized fault schedules, short: Clients/nemesis.py brings up its own replicated
/// cluster on power-loss filesystems (`durability always`) and runs one seeded schedule of kills,
/// pauses, link cuts and power cuts on random worker hosts under a retried write load through both
/// brokers, then checks Jepsen's total-queue rules and compares every replica's journals. It
/// prints each run, the seed that replays it, and a total. `make nemesis` runs long ones.
@Suite(.serialized, .offTheCooperativePool, .enabled(if: NetnsCluster.unavailability == nil, Comment(rawValue: NetnsCluster.unavailability ?? "")),
       .enabled(if: NetnsCluster.replicatedClusterMissing == nil, Comment(rawValue: NetnsCluster.replicatedClusterMissing ?? "")),
       .enabled(if: PowerLossFilesystem.unavailability == nil, Comment(rawValue: PowerLossFilesystem.unavailability ?? "")))
struct NemesisTests {
    static let script = NetnsCluster.repository.appendingPathComponent("Tests/ClusterTests/Clients/nemesis.py").path

    @Test func shortRandomSchedulesLoseNothingAcknowledgedUnderAlways() throws {
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let result = try Command.run("/usr/bin/python3", [Self.script, "--lyceum", LyceumProcess.executable.path, "--runs", "2", "--seconds", "15",
                                                          "--state", state.path + "/cluster"], timeout: .hangLimit * 3)
        print(result.standardOutput)
        #expect(result.standardOutput.contains("nemesis total"), "\(result)")
        #expect(result.succeeded, "\(result)")
    }
}
