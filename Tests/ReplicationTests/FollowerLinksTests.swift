import Foundation
import Journal
import LyceumTestSupport
import Replication
import Testing
import ZeroMQ

/// Several partitions led by one node and followed by another share one link (one connection,
/// one thread) per leader: every partition replicates byte for byte over it, a partition that
/// stops being followed leaves the others going, and the last one closes it.
@Suite(.serialized, .offTheCooperativePool) struct FollowerLinksTests {
    static let hang = Duration.hangLimit
    static let partitions = (0..<4).map { "books.p\($0)" }

    /// One node's copy of every partition.
    final class Node {
        let stores: [String: TestStore]
        let histories: [String: EpochHistory]
        init(_ directory: String) throws {
            var stores: [String: TestStore] = [:]
            var histories: [String: EpochHistory] = [:]
            for partition in FollowerLinksTests.partitions {
                let store = try TestStore(directory: directory + "/" + partition)
                stores[partition] = store
                histories[partition] = try EpochHistory(path: store.history)
            }
            self.stores = stores
            self.histories = histories
        }
        func close() { stores.values.forEach { $0.close() } }
    }

    @Test func thePartitionsLedByOneNodeShareOneLinkAndEachReplicates() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let router = try ReplicationRouter(context: context, endpoint: "tcp://127.0.0.1:*")
        defer { router.stop() }
        let leading = try Node(root.path + "/w1")
        let second = try Node(root.path + "/w2")
        let third = try Node(root.path + "/w3")
        defer { leading.close(); second.close(); third.close() }
        let leaders = try Self.partitions.map { partition in
            ReplicationLeader(
                partition: partition, epoch: 5, store: leading.stores[partition]!, history: leading.histories[partition]!, replicas: 3,
                router: router, mayAcknowledge: { true })
        }
        defer { leaders.forEach { $0.stop() } }
        let secondLinks = FollowerLinks(context: context)
        let thirdLinks = FollowerLinks(context: context)
        var followers: [String: [ReplicationFollower]] = [:]
        for (node, links) in [(second, secondLinks), (third, thirdLinks)] {
            for partition in Self.partitions {
                let replica = FollowerReplica(partition: partition, store: node.stores[partition]!, history: node.histories[partition]!)
                followers[partition, default: []].append(try links.follow(replica, epoch: 5, leaderEndpoint: router.endpoint, security: .plaintext))
            }
        }
        #expect(secondLinks.count == 1 && thirdLinks.count == 1, "one link per leader, whatever the partitions")
        for leader in leaders { #expect(leader.waitUntilRecovered(timeout: Self.hang)) }

        let replies = Replies()
        for (index, leader) in leaders.enumerated() {
            for number in 1...50 {
                let pending = try leading.stores[leader.partition]!.write(number)
                leader.replicate(pending) { ok in replies.withLock { $0[index * 1000 + number] = ok } }
            }
        }
        #expect(eventually(timeout: Self.hang) { replies.withLock { $0.count } == 200 })
        #expect(replies.withLock { $0.values.allSatisfy { $0 } }, "every write acknowledged by a majority")
        for partition in Self.partitions {
            #expect(eventually(timeout: Self.hang) { second.stores[partition]!.lastSequence == 50 && third.stores[partition]!.lastSequence == 50 })
            #expect(second.stores[partition]!.bytes == leading.stores[partition]!.bytes, "\(partition) byte for byte")
            #expect(third.stores[partition]!.bytes == leading.stores[partition]!.bytes, "\(partition) byte for byte")
        }

        // p0 stops being followed on w2: the link stays for the others, which go on.
        followers["books.p0"]![0].stop()
        #expect(secondLinks.count == 1)
        _ = try leading.stores["books.p1"]!.write(51)
        #expect(eventually(timeout: Self.hang) { second.stores["books.p1"]!.lastSequence == 51 })
        #expect(second.stores["books.p0"]!.lastSequence == 50)

        // The last partition closes the link.
        for partition in Self.partitions.dropFirst() { followers[partition]![0].stop() }
        #expect(secondLinks.count == 0)
        for follower in followers.values.flatMap({ $0 }) { follower.stop() }
        #expect(thirdLinks.count == 0)
    }
}
