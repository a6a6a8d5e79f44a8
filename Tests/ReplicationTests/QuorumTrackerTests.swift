import Replication
import Synchronization
import Testing

@Suite struct QuorumTrackerTests {
    @Test func aWriteIsAcknowledgedOnceAMajorityHasItDurable() {
        let tracker = QuorumTracker(replicas: 3, mayAcknowledge: { true })
        let replies = Mutex<[Bool]>([])
        tracker.whenCommitted(5) { ok in replies.withLock { $0.append(ok) } }
        tracker.update("leader", durable: 5)
        #expect(replies.withLock { $0 }.isEmpty, "the leader alone is not a majority of 3")
        tracker.update("w2", durable: 4)
        #expect(replies.withLock { $0 }.isEmpty)
        tracker.update("w2", durable: 5)
        #expect(replies.withLock { $0 } == [true])
        #expect(tracker.committed == 5)
        tracker.update("w2", durable: 1)  // never moves back
        #expect(tracker.committed == 5)
    }

    @Test func aDeposedLeaderAcknowledgesNothing() {
        let allowed = Atomic<Bool>(true)
        let tracker = QuorumTracker(replicas: 3, mayAcknowledge: { allowed.load(ordering: .relaxed) })
        let replies = Mutex<[Bool]>([])
        tracker.whenCommitted(1) { ok in replies.withLock { $0.append(ok) } }
        tracker.whenCommitted(2) { ok in replies.withLock { $0.append(ok) } }
        allowed.store(false, ordering: .relaxed)
        tracker.update("leader", durable: 1)
        tracker.update("w3", durable: 1)
        #expect(replies.withLock { $0 } == [false])
        tracker.end()
        #expect(replies.withLock { $0 } == [false, false])
        tracker.whenCommitted(3) { ok in replies.withLock { $0.append(ok) } }
        #expect(replies.withLock { $0 } == [false, false, false])
    }

    @Test func oneReplicaIsItsOwnMajority() {
        let tracker = QuorumTracker(replicas: 1, mayAcknowledge: { true })
        let replies = Mutex<[Bool]>([])
        tracker.whenCommitted(1) { ok in replies.withLock { $0.append(ok) } }
        tracker.update("leader", durable: 1)
        #expect(replies.withLock { $0 } == [true])
    }
}
