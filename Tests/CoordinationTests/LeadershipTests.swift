import Coordination
import Foundation
import LyceumTestSupport
import Synchronization
import Testing

/// Leadership of a key over a real etcd: one leader at a time, epochs that grow, deposition
/// learnt, and a leader that stops acting before its lease can expire when etcd is gone.
@Suite(.serialized, .offTheCooperativePool) struct LeadershipTests {
    /// Short leases, so that expiries happen within the test: 2 s, renewed every 500 ms, each
    /// renewal given 700 ms (0.5 + 2 × 0.7 ≤ 2).
    static let timing = try! LeaseTiming(ttlSeconds: 2, keepAlivePeriod: .milliseconds(500), retry: .milliseconds(700))
    static let hang = Duration.hangLimit

    static func isLeader(_ state: LeadershipState) -> Bool { if case .leader = state { true } else { false } }
    static func epoch(_ state: LeadershipState?) -> Int64? { if case .leader(let epoch)? = state { epoch } else { nil } }

    @Test func twoContendersElectOneLeaderAndATakeoverRaisesTheEpoch() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let client = try EtcdClient(endpoints: [etcd.endpoint])
        let election = LeaderElection(client: client, key: "lyceum/leader/books.p0")
        let first = Candidacy(election: election, name: "w1", timing: Self.timing)
        let second = Candidacy(election: election, name: "w2", timing: Self.timing)
        defer { first.stop(resign: false); second.stop(resign: false) }
        // Both settle: one leads, the other follows it in the same epoch.
        let settled = eventually(timeout: Self.hang) {
            switch (first.state, second.state) {
            case (.leader(let epoch), .follower(let other)): other == Leadership(leader: "w1", epoch: epoch)
            case (.follower(let other), .leader(let epoch)): other == Leadership(leader: "w2", epoch: epoch)
            default: false
            }
        }
        #expect(settled)
        let (leader, follower) = Self.isLeader(first.state) ? (first, second) : (second, first)
        let oldEpoch = try #require(Self.epoch(leader.state))
        #expect(leader.mayAcknowledge(epoch: oldEpoch))
        #expect(!follower.mayAcknowledge(epoch: oldEpoch))
        #expect(try election.current() == Leadership(leader: leader.name, epoch: oldEpoch))

        // The leader dies without resigning (as a killed process): its key goes with its lease.
        let died = ContinuousClock.now
        leader.stop(resign: false)
        let taken = follower.wait(timeout: Self.hang) { Self.isLeader($0) }
        let newEpoch = try #require(Self.epoch(taken))
        print("take-over after the leader stopped renewing: \(ContinuousClock.now - died) (ttl \(Self.timing.ttlSeconds) s)")
        #expect(newEpoch > oldEpoch)
        #expect(follower.mayAcknowledge(epoch: newEpoch))
        #expect(!follower.mayAcknowledge(epoch: oldEpoch))
        #expect(!leader.mayAcknowledge(epoch: oldEpoch))
        #expect(try election.current() == Leadership(leader: follower.name, epoch: newEpoch))
    }

    @Test func aResignationHandsOverAtOnce() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let client = try EtcdClient(endpoints: [etcd.endpoint])
        let election = LeaderElection(client: client, key: "lyceum/leader/books.p1")
        let first = Candidacy(election: election, name: "w1", timing: Self.timing)
        let firstEpoch = try #require(Self.epoch(first.wait(timeout: Self.hang) { Self.isLeader($0) }))
        let second = Candidacy(election: election, name: "w2", timing: Self.timing)
        defer { second.stop(resign: false) }
        #expect(second.wait(timeout: Self.hang) { $0 == .follower(Leadership(leader: "w1", epoch: firstEpoch)) } != nil)
        first.stop(resign: true)
        let secondEpoch = try #require(Self.epoch(second.wait(timeout: Self.hang) { Self.isLeader($0) }))
        #expect(secondEpoch > firstEpoch)
        // A resignation of an epoch that is over deletes nothing.
        #expect(try election.resign(epoch: firstEpoch) == false)
        #expect(try election.current()?.epoch == secondEpoch)
    }

    /// Three candidates: the leader hands over to a chosen node, which always wins (never the
    /// third, nor the old leader itself), in a higher epoch; a hand-over of an ended epoch does
    /// nothing; a successor that never campaigns holds the key back for its name's TTL only.
    @Test func aHandOverElectsTheChosenCandidate() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let client = try EtcdClient(endpoints: [etcd.endpoint])
        let election = LeaderElection(client: client, key: "lyceum/leader/books.p4")
        #expect(election.successorKey == "lyceum/successor/books.p4")
        let candidates = ["w1", "w2", "w3"].map { Candidacy(election: election, name: "\($0) tcp://127.0.0.1:1", timing: Self.timing) }
        defer { for candidate in candidates { candidate.stop(resign: false) } }
        func leader() -> (candidate: Candidacy, epoch: Int64)? {
            for candidate in candidates { if let epoch = Self.epoch(candidate.state) { return (candidate, epoch) } }
            return nil
        }
        try #require(eventually(timeout: Self.hang) { leader() != nil })
        var (current, epoch) = try #require(leader())
        for _ in 0..<4 {
            // The next node after the leader's, round the three: each is chosen in turn.
            let index = candidates.firstIndex { $0 === current }!
            let chosen = candidates[(index + 1) % 3]
            let chosenNode = LeaderElection.node(of: chosen.name)
            #expect(try current.handOff(to: chosenNode))
            let next = try #require(Self.epoch(chosen.wait(timeout: Self.hang) { Self.epoch($0).map { $0 > epoch } ?? false }))
            #expect(try election.current() == Leadership(leader: chosen.name, epoch: next))
            #expect(!current.mayAcknowledge(epoch: epoch))
            // The successor's name is gone once it leads: a later plain resignation is not held back.
            #expect(try client.get(election.successorKey) == nil)
            #expect(try election.handOff(epoch: epoch, to: "w9", lease: 0) == false)
            (current, epoch) = (chosen, next)
        }
        // A successor that never campaigns: the others wait for its name to expire, then one leads.
        let lease = try client.grantLease(ttlSeconds: Self.timing.ttlSeconds)
        let handed = ContinuousClock.now
        #expect(try election.handOff(epoch: epoch, to: "w9", lease: lease.id))
        let after = try #require(eventually(timeout: Self.hang) { leader().map { $0.epoch > epoch } ?? false } ? leader() : nil)
        #expect(after.epoch > epoch)
        print("a hand-over to a node that never campaigned held the key back for \(ContinuousClock.now - handed) (ttl \(Self.timing.ttlSeconds) s)")
    }

    @Test func aLeaderWhoseLeaseIsGoneLearnsItIsDeposed() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let client = try EtcdClient(endpoints: [etcd.endpoint])
        let election = LeaderElection(client: client, key: "lyceum/leader/books.p2")
        let changes = Mutex<[LeadershipState]>([])
        let candidate = Candidacy(election: election, name: "w1", timing: Self.timing) { state in changes.withLock { $0.append(state) } }
        defer { candidate.stop(resign: false) }
        let epoch = try #require(Self.epoch(candidate.wait(timeout: Self.hang) { Self.isLeader($0) }))
        let lease = try #require(candidate.lease)
        // etcd expires the lease (revoked here: what expiry does, without waiting for it).
        try client.revokeLease(lease.lease.id)
        #expect(eventually(timeout: Self.hang) { !candidate.mayAcknowledge(epoch: epoch) })
        // It learnt it was deposed (state left `leader(epoch)`), then won a new, higher epoch with a new lease.
        let again = try #require(Self.epoch(candidate.wait(timeout: Self.hang) { Self.epoch($0).map { $0 > epoch } ?? false }))
        #expect(again > epoch)
        #expect(candidate.lease?.lease.id != lease.lease.id)
        #expect(changes.withLock { $0 }.contains(.candidate))
    }

    @Test func aLeaderStopsActingWithinItsLeaseWhenEtcdDiesAndLeadsAgainWhenItReturns() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let client = try EtcdClient(endpoints: [etcd.endpoint], limits: GatewayLimits(connectTimeout: .milliseconds(300), requestTimeout: .milliseconds(700)))
        let election = LeaderElection(client: client, key: "lyceum/leader/books.p3")
        let steppedDown = Mutex<ContinuousClock.Instant?>(nil)
        let candidate = Candidacy(election: election, name: "w1", timing: Self.timing) { state in
            if state == .candidate { steppedDown.withLock { $0 = $0 ?? .now } }
        }
        defer { candidate.stop(resign: false) }
        let epoch = try #require(Self.epoch(candidate.wait(timeout: Self.hang) { Self.isLeader($0) }))
        let keeper = try #require(candidate.lease)
        // Let two renewals succeed, so the last one is recent when etcd dies.
        for _ in 0..<2 {
            let renewed = keeper.lastRenewal
            try #require(eventually(timeout: Self.hang) { keeper.lastRenewal > renewed })
        }
        etcd.kill()
        let killed = ContinuousClock.now
        #expect(eventually(timeout: Self.hang) { !candidate.mayAcknowledge(epoch: epoch) })
        #expect(candidate.wait(timeout: Self.hang) { $0 == .candidate } != nil)
        let lastRenewal = keeper.lastRenewal
        // `onChange` runs just after the state changes: wait for it too.
        #expect(eventually(timeout: Self.hang) { steppedDown.withLock { $0 } != nil })
        let down = try #require(steppedDown.withLock { $0 })
        // The safety rule itself, not a speed: it stopped acting before the lease it last renewed could expire.
        #expect(keeper.actingDeadline <= lastRenewal + Self.timing.ttl)
        #expect(!keeper.mayAct(at: lastRenewal + Self.timing.ttl))
        print("etcd killed: leader stepped down \(down - killed) after the kill, \(down - lastRenewal) after its last renewal (acting window \(Self.timing.actingWindow), ttl \(Self.timing.ttl))")
        // etcd returns (same data): the candidate leads again in a higher epoch.
        try etcd.start()
        let again = try #require(Self.epoch(candidate.wait(timeout: Self.hang) { Self.epoch($0).map { $0 > epoch } ?? false }))
        #expect(again > epoch)
    }
}
