@testable import PartitionOperations
import Testing

/// The hand-off a node makes to even out its leaderships, without etcd or sockets: one
/// partition at a time, only to a caught-up follower, only to a node leading at least two fewer,
/// and nothing once the node leads its share.
@Suite struct LeadershipBalanceTests {
    typealias Led = LeadershipBalance.Led

    /// `count` partitions of books, all led by `leader` with w1–w3 following, as after a start
    /// where `leader` campaigned first.
    static func all(ledBy leader: String, count: Int) -> (leaders: [String: String], led: [Led]) {
        let names = (0..<count).map { "books.p\($0)" }
        let followers = ["w1", "w2", "w3"].filter { $0 != leader }
        return (Dictionary(uniqueKeysWithValues: names.map { ($0, leader) }), names.map { Led(partition: $0, followers: followers) })
    }

    @Test func aNodeLeadingEverythingHandsOneOverToTheLeastLoaded() {
        let (leaders, led) = Self.all(ledBy: "w2", count: 16)
        let move = LeadershipBalance.next(node: "w2", leaders: leaders, led: led)
        #expect(move?.partition == "books.p15" && move?.to == "w1", "\(String(describing: move))")
    }

    @Test func handingOverOneAtATimeEndsAtMostOneApart() {
        var (leaders, _) = Self.all(ledBy: "w2", count: 16)
        var handOffs = 0
        // Each node looks in turn, as their passes would, until none hands over.
        while true {
            var moved = false
            for node in ["w1", "w2", "w3"] {
                let led = leaders.filter { $0.value == node }.keys.sorted().map { Led(partition: $0, followers: ["w1", "w2", "w3"].filter { $0 != node }) }
                guard let move = LeadershipBalance.next(node: node, leaders: leaders, led: led) else { continue }
                leaders[move.partition] = move.to
                handOffs += 1
                moved = true
            }
            if !moved { break }
        }
        let counts = Dictionary(grouping: leaders.values, by: { $0 }).mapValues(\.count)
        #expect(counts.values.max()! - counts.values.min()! <= 1, "\(counts)")
        #expect(counts.values.max()! <= 6, "⌈16 / 3⌉")
        #expect(handOffs == 10, "the fewest: 16 - 6")
    }

    @Test func onlyACaughtUpFollowerTakesALeadership() {
        // w2 leads all four; w3 is not among any partition's caught-up followers.
        let leaders = ["books.p0": "w2", "books.p1": "w2", "books.p2": "w2", "books.p3": "w2"]
        let led = leaders.keys.sorted().map { Led(partition: $0, followers: ["w1"]) }
        #expect(LeadershipBalance.next(node: "w2", leaders: leaders, led: led)?.to == "w1")
        let noneCaughtUp = leaders.keys.sorted().map { Led(partition: $0, followers: []) }
        #expect(LeadershipBalance.next(node: "w2", leaders: leaders, led: noneCaughtUp) == nil)
    }

    @Test func aNodeLeadingItsShareHandsNothingOver() {
        // 6, 5, 5 of 16: one apart at most.
        var leaders: [String: String] = [:]
        for partition in 0..<16 { leaders["books.p\(partition)"] = ["w1", "w2", "w3"][partition % 3] }
        for node in ["w1", "w2", "w3"] {
            let led = leaders.filter { $0.value == node }.keys.map { Led(partition: $0, followers: ["w1", "w2", "w3"].filter { $0 != node }) }
            #expect(LeadershipBalance.next(node: node, leaders: leaders, led: led) == nil, "\(node)")
        }
    }

    @Test func servicesAreBalancedEachOnItsOwn() {
        // w1 leads every progress partition and w2 every books one: each service is uneven.
        var leaders: [String: String] = [:]
        for partition in 0..<4 {
            leaders["books.p\(partition)"] = "w2"
            leaders["progress.p\(partition)"] = "w1"
        }
        let led = (0..<4).map { Led(partition: "progress.p\($0)", followers: ["w2", "w3"]) }
        let move = LeadershipBalance.next(node: "w1", leaders: leaders, led: led)
        #expect(move?.partition.hasPrefix("progress.") == true && move?.to == "w2", "\(String(describing: move))")
    }
}
