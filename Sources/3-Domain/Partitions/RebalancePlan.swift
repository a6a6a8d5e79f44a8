/// The moves that even out how many partitions of one service each node holds: afterwards every
/// node holds ⌊n/k⌋ or ⌈n/k⌉ of the n held partitions (k nodes), with as few moves as that takes.
/// Each move takes the highest-numbered partition of the node holding the most and gives it to
/// the node holding the fewest (ties by node name), so the plan is the same for the same input.
public struct RebalancePlan: Equatable, Sendable {
    /// One move of the plan.
    public struct Move: Equatable, Sendable {
        /// The partition moved.
        public let partition: Int
        /// The node that gives it up.
        public let from: String
        /// The node that takes it.
        public let to: String

        /// The move of `partition` from node `from` to node `to`.
        public init(partition: Int, from: String, to: String) {
            self.partition = partition
            self.from = from
            self.to = to
        }
    }

    /// The moves, in the order to make them (one at a time).
    public let moves: [Move]

    /// The plan for `holdings`: node name → the partitions it holds (a node holding none takes
    /// part with an empty list).
    public init(holdings: [String: [Int]]) {
        var held = holdings.mapValues { $0.sorted() }
        var moves: [Move] = []
        while let most = held.max(by: { ($0.value.count, $1.key) < ($1.value.count, $0.key) }),
              let fewest = held.min(by: { ($0.value.count, $0.key) < ($1.value.count, $1.key) }),
              most.value.count - fewest.value.count > 1,
              let partition = most.value.last {
            held[most.key]!.removeLast()
            held[fewest.key]!.append(partition)
            held[fewest.key]!.sort()
            moves.append(Move(partition: partition, from: most.key, to: fewest.key))
        }
        self.moves = moves
    }
}
