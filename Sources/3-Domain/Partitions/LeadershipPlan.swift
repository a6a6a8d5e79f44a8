import JSON

/// The leadership hand-offs that even out how many partitions of one replicated service each
/// node leads. A leadership can go only to a node holding a replica of that partition, so each
/// hand-off goes from a node leading the most to the least-loaded replica holder leading at least
/// two fewer; the plan stops when no such hand-off is left. When every node holds a replica of
/// every partition, every node then leads ⌊n/k⌋ or ⌈n/k⌉ of the n led partitions (k nodes
/// holding replicas); with fewer replicas, as close to that as the replicas allow. Ties go to the
/// highest-numbered partition and the first node name, so the plan is the same for the same input.
public struct LeadershipPlan: Equatable, Sendable {
    /// One hand-off of the plan.
    public typealias Move = RebalancePlan.Move

    /// The hand-offs, in the order to make them (one at a time).
    public let moves: [Move]
    /// How many partitions each node leads before the plan: every node holding a replica, 0 when
    /// it leads none.
    public let before: [String: Int]
    /// How many partitions each node leads once every hand-off is made.
    public let after: [String: Int]

    /// The plan for `replicas` (partition → the nodes holding a replica of it) and `leaders`
    /// (partition → the node leading it; a partition without a leader is left alone).
    public init(replicas: [Int: Set<String>], leaders: [Int: String]) {
        var led: [String: Set<Int>] = [:]
        for nodes in replicas.values { for node in nodes { led[node, default: []] = [] } }
        for (partition, leader) in leaders { led[leader, default: []].insert(partition) }
        before = led.mapValues(\.count)
        var moves: [Move] = []
        while let move = Self.nextMove(led: led, replicas: replicas) {
            led[move.from]!.remove(move.partition)
            led[move.to]!.insert(move.partition)
            moves.append(move)
        }
        self.moves = moves
        after = led.mapValues(\.count)
    }

    /// The hand-off from the node leading the most (then by name) that has one, of its
    /// highest-numbered partition with a replica on a node leading at least two fewer, to the
    /// least-loaded such node (then by name). Each one lowers the sum of the squared counts, so
    /// the plan ends.
    private static func nextMove(led: [String: Set<Int>], replicas: [Int: Set<String>]) -> Move? {
        let byLoad = led.keys.sorted { (led[$0]!.count, $1) > (led[$1]!.count, $0) }
        for source in byLoad {
            let count = led[source]!.count
            for partition in led[source]!.sorted(by: >) {
                let target = (replicas[partition] ?? []).filter { led[$0, default: []].count <= count - 2 }
                    .min { (led[$0, default: []].count, $0) < (led[$1, default: []].count, $1) }
                if let target { return Move(partition: partition, from: source, to: target) }
            }
        }
        return nil
    }

    /// The plan for the replicas of `service` that `describes` (node → its `describe` result)
    /// report: each entry of a node's `replicas` makes it a holder, and `"role":"leading"` its leader.
    public init(service: String, describes: [String: JSONValue]) {
        var replicas: [Int: Set<String>] = [:]
        var leaders: [Int: String] = [:]
        for (node, describe) in describes.sorted(by: { $0.key < $1.key }) {
            for partition in Self.replicas(of: service, in: describe) {
                replicas[partition, default: []].insert(node)
            }
            for partition in Self.replicas(of: service, in: describe, role: "leading") where leaders[partition] == nil {
                leaders[partition] = node
            }
        }
        self.init(replicas: replicas, leaders: leaders)
    }

    /// The partitions of `service` a node's `describe` result lists in `replicas` (with `role`
    /// when given): none for a node replicating nothing.
    public static func replicas(of service: String, in describe: JSONValue, role: String? = nil) -> [Int] {
        guard case .array(let entries)? = describe["replicas"] else { return [] }
        return entries.compactMap { entry in
            guard entry["service"] == .string(service), case .integer(let partition)? = entry["partition"],
                  role.map({ entry["role"] == .string($0) }) ?? true else { return nil }
            return partition
        }
    }
}
