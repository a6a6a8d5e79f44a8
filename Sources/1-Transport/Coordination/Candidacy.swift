import Foundation
import LyceumLogging
import LyceumSupport

/// Where a candidate stands for one leader key.
public enum LeadershipState: Sendable, Equatable {
    /// Not known: no lease yet, or etcd does not answer.
    case candidate
    /// This candidate leads in `epoch`.
    case leader(epoch: Int64)
    /// Another candidate leads.
    case follower(Leadership)
}

/// A candidate for one leader key, run by a thread of its own: it holds a lease
/// (``LeaseKeeper``), campaigns, and watches the key, so that it becomes leader when the key is
/// free, learns at once when its leadership ends (its key deleted or replaced, its lease lost),
/// and campaigns again with a new lease after a loss.
///
/// Acknowledging is allowed only by ``mayAcknowledge(epoch:)``: the candidate leads in that
/// epoch *and* its lease is within its acting window. That check comes before each
/// acknowledgement; the epoch carried by each replicated record is what fences a deposed leader
/// that has not noticed yet (protocol/replication.md).
public final class Candidacy: Sendable {
    /// The key's election.
    public let election: LeaderElection
    /// This candidate's name, the leader key's value while it leads.
    public let name: String
    /// Its lease timings.
    public let timing: LeaseTiming
    private let logger: Logger
    private let onChange: @Sendable (LeadershipState) -> Void
    /// What the candidacy's thread and its callers share; both wait on it.
    private struct State {
        /// The candidate's state.
        var current: LeadershipState = .candidate
        /// The lease held, if any.
        var keeper: LeaseKeeper?
        /// Whether `stop` was called.
        var stopped = false
        /// Whether the thread has ended.
        var finished = false
    }

    private let guarded = Monitor(State())

    /// Starts campaigning for `election`'s key as `name`.
    /// - Parameter onChange: called on the candidacy's thread with every new state.
    public init(election: LeaderElection, name: String, timing: LeaseTiming = .standard, onChange: @escaping @Sendable (LeadershipState) -> Void = { _ in }) {
        self.election = election
        self.name = name
        self.timing = timing
        self.onChange = onChange
        logger = Logger(component: "leadership")
        let thread = Thread { [self] in run() }
        thread.name = "candidacy"
        thread.start()
    }

    /// The candidate's state now.
    public var state: LeadershipState { guarded.withLock { $0.current } }

    /// Whether this candidate may acknowledge a write of `epoch` now: it leads in `epoch` and
    /// its lease is within its acting window.
    public func mayAcknowledge(epoch: Int64) -> Bool {
        let (state, keeper) = guarded.withLock { ($0.current, $0.keeper) }
        return state == .leader(epoch: epoch) && keeper?.mayAct() == true
    }

    /// The lease the candidate holds now, if any.
    public var lease: LeaseKeeper? { guarded.withLock { $0.keeper } }

    /// Waits until `predicate` holds for the state or `timeout` passes.
    /// - Returns: the state that satisfied it, or `nil`.
    public func wait(timeout: Duration, until predicate: (LeadershipState) -> Bool) -> LeadershipState? {
        guarded.wait(until: { predicate($0.current) }, deadline: .now + timeout) { state, holds in holds ? state.current : nil }
    }

    /// Hands this candidate's leadership over to the candidate of node `successor`
    /// (``LeaderElection/handOff(epoch:to:lease:)``, epoch-checked): this candidate learns from
    /// its watch that it no longer leads, and no other node takes the key before `successor`
    /// does, or before the successor's name expires with its own lease, one TTL later.
    /// - Returns: whether it did (false: it does not lead now).
    public func handOff(to successor: String) throws(CoordinationError) -> Bool {
        guard case .leader(let epoch) = state else { return false }
        let lease = try election.client.grantLease(ttlSeconds: timing.ttlSeconds)
        let handed = try election.handOff(epoch: epoch, to: successor, lease: lease.id)
        if handed { logger.info("handing the leadership over", ["key": election.key, "epoch": String(epoch), "successor": successor]) }
        return handed
    }

    /// Stops campaigning and waits for the thread to end. With `resign`, a leader deletes its
    /// key and revokes its lease (a hand-over without waiting for the TTL); without, it just
    /// stops renewing, as a crashed process would.
    public func stop(resign: Bool) {
        guarded.update { $0.stopped = true }
        guarded.wait(until: \.finished)
        let (state, keeper) = guarded.withLock { ($0.current, $0.keeper) }
        if resign, case .leader(let epoch) = state {
            do { try election.resign(epoch: epoch) } catch {
                logger.warning("could not resign; the key goes with the lease", ["key": election.key, "error": error.description])
            }
        }
        keeper?.stop(revoke: resign)
        set(.candidate)
    }

    private var isStopped: Bool { guarded.withLock { $0.stopped } }

    private func set(_ state: LeadershipState) {
        let changed = guarded.update { guarded in
            defer { guarded.current = state }
            return guarded.current != state
        }
        guard changed else { return }
        logger.info("leadership", ["key": election.key, "candidate": name, "state": "\(state)"])
        onChange(state)
    }

    /// A pause before trying again after a failure, cut short by `stop`.
    private func pause(_ duration: Duration) {
        guarded.wait(until: \.stopped, deadline: .now + duration)
    }

    private func run() {
        defer { guarded.update { $0.finished = true } }
        while !isStopped {
            do throws(CoordinationError) {
                let keeper = try liveKeeper()
                switch try election.campaign(as: name, lease: keeper.lease.id) {
                case .elected(let epoch):
                    set(.leader(epoch: epoch))
                    try lead(epoch: epoch, keeper: keeper)
                case .following(let leadership):
                    set(.follower(leadership))
                    try follow(leadership)
                case .waiting:
                    // A hand-over to another node: campaign again shortly (it will have taken
                    // the key, or its name will have expired).
                    pause(.milliseconds(100))
                }
            } catch {
                logger.info("leadership unknown; campaigning again", ["key": election.key, "error": error.description])
                if error.kind == .rejected, error.detail.contains("lease not found") {
                    // Revoked, or expired before its keeper noticed: campaign with a new one.
                    guarded.withLock { $0.keeper }?.stop(revoke: false)
                    guarded.withLock { $0.keeper = nil }
                }
                set(.candidate)
                pause(timing.retry / 2)
            }
        }
    }

    /// The lease held now, or a new one if there is none or it was lost.
    private func liveKeeper() throws(CoordinationError) -> LeaseKeeper {
        if let keeper = guarded.withLock({ $0.keeper }), keeper.loss == nil { return keeper }
        // A loss wakes the waiters, which look at the state (and the lease) again.
        let fresh = try LeaseKeeper(client: election.client, timing: timing, name: name) { [weak self] _ in
            self?.guarded.update { _ in }
        }
        guarded.withLock { $0.keeper = fresh }
        return fresh
    }

    /// Leads until the key stops being this leadership's, the lease is lost, or `stop`. Only
    /// the lease decides while etcd does not answer: a broken watch is opened again (and the key
    /// read, for what the break may have hidden) for as long as the lease lets it act.
    private func lead(epoch: Int64, keeper: LeaseKeeper) throws(CoordinationError) {
        var watch: EtcdWatch?
        while !isStopped {
            if let loss = keeper.loss ?? (keeper.mayAct() ? nil : CoordinationError(.leaseNotRenewed, operation: "lead", detail: "acting window closed")) {
                logger.warning("deposed: lease lost", ["key": election.key, "epoch": String(epoch), "error": loss.description])
                set(.candidate)
                return
            }
            do throws(CoordinationError) {
                if watch == nil {
                    let opened = try election.client.watch(election.key, startRevision: epoch + 1)
                    guard try election.current()?.epoch == epoch else { return deposed(epoch) }
                    watch = opened
                }
                // Short waits: the lease's state is checked between them.
                guard let events = try watch?.next(timeout: .milliseconds(100)) else { continue }
                if events.contains(where: { $0.kind == .delete || $0.keyValue.createRevision != epoch }) { return deposed(epoch) }
            } catch where error.isTransient || error.kind == .malformedResponse {
                watch = nil
                pause(.milliseconds(100))
            }
        }
    }

    private func deposed(_ epoch: Int64) {
        logger.warning("deposed: leader key gone", ["key": election.key, "epoch": String(epoch)])
        set(.candidate)
    }

    /// Waits until `leadership` ends (its key deleted or replaced) or `stop`.
    private func follow(_ leadership: Leadership) throws(CoordinationError) {
        let watch = try election.client.watch(election.key, startRevision: leadership.epoch + 1)
        while !isStopped {
            guard let events = try watch.next(timeout: .milliseconds(200)) else { continue }
            if events.contains(where: { $0.kind == .delete || $0.keyValue.createRevision != leadership.epoch }) { return }
        }
    }
}
