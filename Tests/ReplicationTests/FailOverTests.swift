import Coordination
import Foundation
import Journal
import LyceumTestSupport
import Replication
import Synchronization
import Testing
import ZeroMQ

/// The whole protocol in one process, without the worker: three replicas of a partition, each
/// a `Candidacy` on a real etcd and a replication link; writes go to whichever leads. The
/// leader dies (stops renewing, as a killed process): another is elected with a higher epoch,
/// recovers from the majority, and serves; every acknowledged write is in its log; the old one
/// comes back as a follower and ends with the same bytes.
@Suite(.serialized, .offTheCooperativePool) struct FailOverTests {
    static let timing = try! LeaseTiming(ttlSeconds: 2, keepAlivePeriod: .milliseconds(500), retry: .milliseconds(700))

    /// One replica: its journal, epoch history, candidacy and link.
    final class Node: @unchecked Sendable {
        let name: String
        let endpoint: String
        let store: TestStore
        let history: EpochHistory
        let context: Context
        private let lock = NSLock()
        private var leader: ReplicationLeader?
        private var follower: ReplicationFollower?
        private(set) var candidacy: Candidacy?

        init(name: String, directory: String, context: Context) throws {
            self.name = name
            endpoint = try freeLoopbackEndpoint()
            store = try TestStore(directory: directory)
            history = try EpochHistory(path: store.history)
            self.context = context
        }

        func campaign(_ election: LeaderElection) {
            candidacy = Candidacy(election: election, name: "\(name) \(endpoint)", timing: FailOverTests.timing) { [weak self] state in
                self?.became(state)
            }
        }

        /// The link that goes with the new state (on the candidacy's thread).
        private func became(_ state: LeadershipState) {
            let (oldLeader, oldFollower) = lock.withLock { (leader, follower) }
            oldLeader?.stop()
            oldFollower?.stop()
            lock.withLock { leader = nil; follower = nil }
            do {
                switch state {
                case .leader(let epoch):
                    let candidacy = self.candidacy
                    let link = try ReplicationLeader(
                        partition: "books.p0", epoch: epoch, store: store, history: history, replicas: 3, context: context,
                        endpoint: endpoint, mayAcknowledge: { candidacy?.mayAcknowledge(epoch: epoch) == true })
                    lock.withLock { leader = link }
                case .follower(let leadership):
                    let leaderEndpoint = String(leadership.leader.split(separator: " ").last ?? "")
                    let link = try ReplicationFollower(
                        replica: FollowerReplica(partition: "books.p0", store: store, history: history),
                        epoch: leadership.epoch, context: context, leaderEndpoint: leaderEndpoint)
                    lock.withLock { follower = link }
                case .candidate:
                    break
                }
            } catch {
                Issue.record("\(name) could not start its link: \(error)")
            }
        }

        /// The link while this node leads and has recovered.
        var servingLeader: ReplicationLeader? {
            lock.withLock { leader }.flatMap { $0.isRecovered ? $0 : nil }
        }

        /// Dies as a killed process does: no resignation, no more renewals or replies.
        func kill() {
            candidacy?.stop(resign: false)
            candidacy = nil
            became(.candidate)
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
        let nodes = try (1...3).map { try Node(name: "w\($0)", directory: root.path + "/w\($0)", context: context) }
        defer { for node in nodes { node.kill(); node.store.close() } }
        for node in nodes { node.campaign(election) }

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
        first.campaign(election)
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
