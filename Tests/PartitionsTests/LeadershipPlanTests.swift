import Partitions
import Testing

@Suite struct LeadershipPlanTests {
    /// One case: the replica holders and leaders, and the expected hand-offs and counts after.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let replicas: [Int: Set<String>]
        let leaders: [Int: String]
        let moves: [LeadershipPlan.Move]
        let after: [String: Int]
        var testDescription: String { name }
    }

    static let everywhere: Set<String> = ["w1", "w2", "w3"]

    static let cases: [Case] = [
        Case(
            name: "all led by one node",
            replicas: Dictionary(uniqueKeysWithValues: (0..<6).map { ($0, everywhere) }),
            leaders: Dictionary(uniqueKeysWithValues: (0..<6).map { ($0, "w1") }),
            moves: [.init(partition: 5, from: "w1", to: "w2"), .init(partition: 4, from: "w1", to: "w3"),
                    .init(partition: 3, from: "w1", to: "w2"), .init(partition: 2, from: "w1", to: "w3")],
            after: ["w1": 2, "w2": 2, "w3": 2]),
        Case(
            name: "already balanced",
            replicas: Dictionary(uniqueKeysWithValues: (0..<5).map { ($0, everywhere) }),
            leaders: [0: "w1", 1: "w2", 2: "w3", 3: "w1", 4: "w2"],
            moves: [], after: ["w1": 2, "w2": 2, "w3": 1]),
        Case(
            name: "a node without replicas of a partition never gets its leadership",
            replicas: [0: ["w1", "w2"], 1: ["w1", "w2"], 2: ["w1", "w2"], 3: ["w1", "w2"], 4: ["w1", "w3"]],
            leaders: [0: "w1", 1: "w1", 2: "w1", 3: "w1", 4: "w1"],
            moves: [.init(partition: 4, from: "w1", to: "w3"), .init(partition: 3, from: "w1", to: "w2"),
                    .init(partition: 2, from: "w1", to: "w2")],
            after: ["w1": 2, "w2": 2, "w3": 1]),
        Case(
            name: "two replica holders: a node holding none is not one of the nodes counted",
            replicas: [0: ["w1", "w2"], 1: ["w1", "w2"]],
            leaders: [0: "w1", 1: "w1"],
            moves: [.init(partition: 1, from: "w1", to: "w2")],
            after: ["w1": 1, "w2": 1]),
        Case(
            name: "odd counts end within one",
            replicas: Dictionary(uniqueKeysWithValues: (0..<7).map { ($0, everywhere) }),
            leaders: [0: "w1", 1: "w1", 2: "w1", 3: "w1", 4: "w1", 5: "w2", 6: "w2"],
            moves: [.init(partition: 4, from: "w1", to: "w3"), .init(partition: 3, from: "w1", to: "w3")],
            after: ["w1": 3, "w2": 2, "w3": 2]),
        Case(
            name: "a partition without a leader is left alone",
            replicas: [0: everywhere, 1: everywhere, 2: everywhere],
            leaders: [0: "w1", 1: "w1"],
            moves: [.init(partition: 1, from: "w1", to: "w2")],
            after: ["w1": 1, "w2": 1, "w3": 0]),
        Case(name: "nothing replicated", replicas: [:], leaders: [:], moves: [], after: [:]),
    ]

    @Test(arguments: cases) func handsOffUntilNoReplicaHolderLeadsTwoFewer(_ example: Case) {
        let plan = LeadershipPlan(replicas: example.replicas, leaders: example.leaders)
        #expect(plan.moves == example.moves)
        #expect(plan.after == example.after)
        #expect(plan.before.values.reduce(0, +) == plan.after.values.reduce(0, +))
        for move in plan.moves { #expect(example.replicas[move.partition]?.contains(move.to) == true) }
    }
}
