import Configuration
import Foundation
import JSON
import PartitionOperations
import Partitions

/// `lyceum partitions rebalance` for a replicated service: moving a replica does not move load,
/// leading does (the leader takes every write), so it evens out the leaderships instead, with
/// the hand-offs of a `LeadershipPlan`, as `lyceum partitions move P --to NODE --leadership` makes them.
extension PartitionMoveCommand {
    /// How long a hand-off may take to show, the target leading in its `describe`, before the
    /// rebalance stops: a hang limit well above a `lease-ttl` (the longest a named successor waits).
    static let leadershipWait: Duration = .seconds(120)

    /// Hands the leaderships of `service` over, one at a time, waiting for each to be led by
    /// its target before the next; prints the counts before, each hand-off, and the counts after.
    static func rebalanceLeaderships(
        service: String, describes: [String: JSONValue], settings: Settings, security: ProcessSecurity
    ) -> Int32 {
        let plan = LeadershipPlan(service: service, describes: describes)
        print("\(service): leaderships before: \(counts(plan.before))")
        if plan.moves.isEmpty {
            print("\(service): leaderships balanced over \(plan.before.count) replica holders")
            return Status.moved
        }
        for (index, step) in plan.moves.enumerated() {
            let name = "\(service).p\(step.partition)"
            print("[\(index + 1)/\(plan.moves.count)] moving the leadership of \(name) from \(step.from) to \(step.to) …")
            let status = move(
                service: service, partition: step.partition, from: step.from, to: step.to, leadership: true, settings: settings, security: security)
            guard status == Status.moved else { return status }
            guard awaitLeadership(service: service, partition: step.partition, by: step.to, settings: settings, security: security) else {
                printError("lyceum partitions rebalance: \(step.to) does not lead \(name) within \(leadershipWait); run 'lyceum status' and then this command again")
                return Status.noReply
            }
        }
        do {
            let now = try nodes(settings: settings, security: security)
            print("\(service): leaderships after: \(counts(LeadershipPlan(service: service, describes: now).before))")
        } catch {
            // The hand-offs are done and confirmed one by one; only the summary is missing.
            FileHandle.standardError.write(Data("\(service): leaderships after: not read (\(error))\n".utf8))
        }
        return Status.moved
    }

    /// Whether `node` reports leading `partition` of `service` within `leadershipWait`.
    private static func awaitLeadership(
        service: String, partition: Int, by node: String, settings: Settings, security: ProcessSecurity
    ) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + leadershipWait
        while clock.now < deadline {
            if case .success(let describe) = StatusCommand.describe(NodeService.namePrefix + node, settings: settings, security: security),
               LeadershipPlan.replicas(of: service, in: describe, role: "leading").contains(partition) {
                return true
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return false
    }

    /// `w1 2, w2 1, w3 1`: node order.
    private static func counts(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}
