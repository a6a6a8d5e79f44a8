import Partitions
import Testing

@Suite struct RebalancePlanTests {
    @Test func everyNodeEndsWithTheFloorOrCeilingOfTheShareInTheFewestMoves() {
        let plan = RebalancePlan(holdings: ["w1": Array(0..<8), "w2": [], "w3": []])
        #expect(plan.moves == [
            .init(partition: 7, from: "w1", to: "w2"), .init(partition: 6, from: "w1", to: "w3"),
            .init(partition: 5, from: "w1", to: "w2"), .init(partition: 4, from: "w1", to: "w3"),
            .init(partition: 3, from: "w1", to: "w2"),
        ])
        var counts = ["w1": 8, "w2": 0, "w3": 0]
        for move in plan.moves {
            counts[move.from]! -= 1
            counts[move.to]! += 1
        }
        #expect(counts.values.sorted() == [2, 3, 3])
    }

    @Test func aBalancedOrSingleNodeClusterNeedsNoMove() {
        #expect(RebalancePlan(holdings: ["w1": [0, 1, 2], "w2": [3, 4]]).moves == [])
        #expect(RebalancePlan(holdings: ["w1": [0, 1, 2]]).moves == [])
        #expect(RebalancePlan(holdings: [:]).moves == [])
    }
}
