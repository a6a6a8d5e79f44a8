import Synchronization

/// The leader's count of who has which records durable, and the replies that wait for a
/// majority: a write is acknowledged only when a majority of the replica set (the leader counts
/// as one) has it durable *and* the leader may still acknowledge (its lease, its epoch).
/// Thread-safe: the leader's own syncs (at the end of its pool's batch) and the replication link
/// both report to it.
public final class QuorumTracker: Sendable {
    /// The replica set's size (R).
    public let replicas: Int
    private let mayAcknowledge: @Sendable () -> Bool
    private let state = Mutex(State())

    /// Who has what durable, the replies waiting, and whether the leadership is over.
    private struct State {
        var durable: [String: UInt64] = [:]
        var waiting: [(sequence: UInt64, reply: @Sendable (Bool) -> Void)] = []
        var ended = false

        /// The highest sequence durable on `majority` members.
        func committed(majority: Int) -> UInt64 {
            let counts = durable.values.sorted(by: >)
            return counts.count >= majority ? counts[majority - 1] : 0
        }
    }

    /// How many replicas make a majority.
    public var majority: Int { replicas / 2 + 1 }

    /// A tracker for a replica set of `replicas`, whose replies go out only while `mayAcknowledge` holds.
    public init(replicas: Int, mayAcknowledge: @escaping @Sendable () -> Bool) {
        self.replicas = max(1, replicas)
        self.mayAcknowledge = mayAcknowledge
    }

    /// The highest sequence durable on a majority.
    public var committed: UInt64 { state.withLock { [majority] in $0.committed(majority: majority) } }

    /// Records that `member` has every record through `sequence` durable (never moves back).
    public func update(_ member: String, durable sequence: UInt64) {
        let ready: [@Sendable (Bool) -> Void] = state.withLock { [majority] state in
            state.durable[member] = max(state.durable[member] ?? 0, sequence)
            let committed = state.committed(majority: majority)
            let done = state.waiting.filter { $0.sequence <= committed }
            state.waiting.removeAll { $0.sequence <= committed }
            return done.map(\.reply)
        }
        guard !ready.isEmpty else { return }
        let allowed = mayAcknowledge()
        for reply in ready { reply(allowed) }
    }

    /// Forgets `member` (it left the replica set, or must catch up anew).
    public func remove(_ member: String) {
        state.withLock { _ = $0.durable.removeValue(forKey: member) }
    }

    /// Calls `reply(true)` once `sequence` is durable on a majority and acknowledging is still
    /// allowed, `reply(false)` if it is not allowed then or the tracker ends first.
    public func whenCommitted(_ sequence: UInt64, _ reply: @escaping @Sendable (Bool) -> Void) {
        let now: Bool? = state.withLock { [majority] state in
            if state.ended { return false }
            if sequence <= state.committed(majority: majority) { return true }
            state.waiting.append((sequence, reply))
            return nil
        }
        if let now { reply(now && mayAcknowledge()) }
    }

    /// Ends the tracker (the leadership is over): every waiting reply gets `false`.
    public func end() {
        let pending = state.withLock { state in
            state.ended = true
            defer { state.waiting.removeAll() }
            return state.waiting.map(\.reply)
        }
        for reply in pending { reply(false) }
    }
}
