import Coordination
import Foundation
import Journal
import LyceumTestSupport
import PartitionOperations
import Replication
import Synchronization
import Testing
import ZeroMQ

/// The whole protocol in one process, without the worker: three replicas of a partition, each
/// a `PartitionReplica` (a `Candidacy` on a real etcd and the replication link of its role);
/// writes go to whichever leads. The
/// leader dies (stops renewing, as a killed process): another is elected with a higher epoch,
/// recovers from the majority, and serves; every acknowledged write is in its log; the old one
/// comes back as a follower and ends with the same bytes.
@Suite(.serialized, .offTheCooperativePool) struct FailOverTests {
    static let timing = try! LeaseTiming(ttlSeconds: 2, keepAlivePeriod: .milliseconds(500), retry: .milliseconds(700))

    /// One replica: its journal and epoch history, and the `PartitionReplica` that runs it.
    final class Node: @unchecked Sendable {
        let name: String
        let endpoint: String
        let store: TestStore
        let history: EpochHistory
        private let lock = NSLock()
        private var replica: PartitionReplica?
        private var router: ReplicationRouter?

        init(name: String, directory: String) throws {
            self.name = name
            endpoint = try freeLoopbackEndpoint()
            store = try TestStore(directory: directory)
            history = try EpochHistory(path: store.history)
        }

        /// Campaigns, leading on a router of its own (its process's), bound at the first campaign.
        func campaign(_ election: LeaderElection, context: Context) throws {
            let router = try lock.withLock { try self.router ?? ReplicationRouter(context: context, endpoint: endpoint) }
            let replica = PartitionReplica(
                partition: "books.p0", node: name, endpoint: endpoint, router: router, links: FollowerLinks(context: context), store: store,
                history: history, replicas: 3, election: election, timing: FailOverTests.timing)
            lock.withLock { self.replica = replica; self.router = router }
        }

        /// The link while this node leads and has recovered.
        var servingLeader: ReplicationLeader? { lock.withLock { replica }?.servingLeader }

        /// Dies as a killed process does: no resignation, no more renewals or replies.
        /// Stops the router (after ``kill()``).
        func stopRouter() { lock.withLock { router }?.stop() }

        func kill() {
            let replica = lock.withLock { defer { self.replica = nil }; return self.replica }
            replica?.stop(resign: false)
        }
    }

    @Test func theLeaderDiesAndNoAcknowledgedWriteIsLost() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let client = try EtcdClient(endpoints: [etcd.endpoint])
        let election = LeaderElection(client: client, key: "lyceum/leader/books.p0")
        let nodes = try (1...3).map { try Node(name: "w\($0)", directory: root.path + "/w\($0)") }
        defer { for node in nodes { node.kill(); node.stopRouter(); node.store.close() } }
        for node in nodes { try node.campaign(election, context: context) }

        // A writer: one book at a time, at whichever node leads and has recovered.
        let acknowledged = Mutex<[Int: ContinuousClock.Instant]>([:])
        let stop = Atomic<Bool>(false)
        let writer = Thread {
            var number = 0
            while !stop.load(ordering: .relaxed) {
                guard let node = nodes.first(where: { $0.servingLeader != nil }), let link = node.servingLeader else {
                    Thread.sleep(forTimeInterval: 0.01)
                    continue
                }
                number += 1
                let book = number
                guard let pending = try? node.store.write(book) else { continue }
                let done = DispatchSemaphore(value: 0)
                link.replicate(pending) { ok in
                    if ok { acknowledged.withLock { $0[book] = .now } }
                    done.signal()
                }
                // Waits for this write's outcome, as a client does (its leadership may end first).
                while done.wait(timeout: .now() + 0.1) == .timedOut, !stop.load(ordering: .relaxed) {}
            }
        }
        writer.start()
        defer { stop.store(true, ordering: .relaxed) }

        #expect(eventually { acknowledged.withLock { $0.count } >= 200 })
        let first = try #require(nodes.first { $0.servingLeader != nil })
        let firstEpoch = try #require(first.servingLeader?.epoch)
        first.kill()
        // From here on the old leader acknowledges nothing (its link is stopped).
        let killed = ContinuousClock.now
        let lastBefore = acknowledged.withLock { $0.values.max() } ?? killed
        let countAtKill = acknowledged.withLock { $0.count }
        #expect(eventually { acknowledged.withLock { $0.count } >= countAtKill + 200 })
        let second = try #require(nodes.first { $0.servingLeader != nil })
        let secondEpoch = try #require(second.servingLeader?.epoch)
        #expect(second !== first)
        #expect(secondEpoch > firstEpoch)
        let firstAfter = acknowledged.withLock { $0.values.filter { $0 > killed }.min() } ?? .now
        print("fail-over (TTL \(Self.timing.ttlSeconds) s): last acknowledgement before the kill to the first after it: \(firstAfter - lastBefore)")

        // The old leader comes back and follows; its journal converges on the leader's.
        try first.campaign(election, context: context)
        stop.store(true, ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(eventually { first.store.lastSequence == second.store.lastSequence && nodes.allSatisfy { $0.store.bytes == second.store.bytes } })
        // Every acknowledged write is in the leader's state, and in every replica's.
        let books = Set(acknowledged.withLock { Array($0.keys) })
        for node in nodes {
            let present = Set(node.store.state.snapshot().map(\.key))
            let missing = books.filter { !present.contains("b\($0)") }
            #expect(missing.isEmpty, "\(node.name) lacks acknowledged books \(missing.sorted().prefix(10))")
        }
        print("acknowledged writes: \(books.count), lost: 0 checked on \(nodes.count) replicas; epochs \(firstEpoch) → \(secondEpoch)")
    }
}
