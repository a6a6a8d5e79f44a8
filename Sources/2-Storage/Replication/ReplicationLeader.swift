import Foundation
import Journal
import LyceumSupport
import Synchronization
import Telemetry
import ZeroMQ

/// The leader's end of the replication channel for one partition, served by the process's
/// ``ReplicationRouter`` (one ROUTER for every partition the process leads) on its thread: the
/// socket and threads around a ``LeaderReplica``, which decides everything (recovery, shipping,
/// counting, deposition) without sockets. This end sends what it returns, applies its effects,
/// registers the leader's own fdatasyncs, and publishes its followers' progress to other threads.
public final class ReplicationLeader: @unchecked Sendable {
    /// The partition (`books.p7`).
    public let partition: String
    /// The epoch this leadership writes in.
    public let epoch: Int64
    /// Who has what durable, and the replies waiting for a majority.
    public let quorum: QuorumTracker
    /// Whether recovery is over, waited on by ``waitUntilRecovered(timeout:)``.
    private let recovered = Monitor(false)
    private let router: ReplicationRouter
    /// Whether the router is this leader's alone (made by the initializer taking an endpoint).
    private let ownsRouter: Bool
    private let stopped = Atomic<Bool>(false)
    /// The protocol's state, touched on the router's thread only.
    private let machine: LeaderReplica
    private let onDeposed: @Sendable (Int64) -> Void
    private let onRecovered: @Sendable () -> Void
    private let onCommitted: @Sendable (Duration) -> Void
    /// The last write given to ``replicate(_:reply:)`` whose own durability the router's next
    /// pass waits for.
    private let ownWrite = Mutex<PendingWrite?>(nil)
    /// The followers as of the link's last pass, for other threads (status, metrics).
    private let published = Mutex<[FollowerProgress]>([])

    /// Starts leading `partition` in `epoch` from `store` on `router` and recovers (see above);
    /// ``isRecovered`` says when it may write. The store's journal must not be written to before
    /// then.
    /// - Parameters:
    ///   - replicas: the replica set's size, this leader included.
    ///   - mayAcknowledge: whether the leadership still holds (``Coordination/Candidacy/mayAcknowledge(epoch:)``).
    ///   - onDeposed: called (on the router's thread) with the newer epoch a follower refused it for.
    ///   - onRecovered: called (on the router's thread) once recovery is over: writes may start.
    ///     It must not block: every partition the router serves waits meanwhile.
    ///   - onCommitted: told, for each write given to ``replicate(_:reply:)`` that a majority
    ///     acknowledged, how long it waited from then (on the thread that completed the majority).
    public convenience init(
        partition: String, epoch: Int64, store: any ReplicaStore, history: EpochHistory, replicas: Int, router: ReplicationRouter,
        mayAcknowledge: @escaping @Sendable () -> Bool, onDeposed: @escaping @Sendable (Int64) -> Void = { _ in },
        onRecovered: @escaping @Sendable () -> Void = {}, onCommitted: @escaping @Sendable (Duration) -> Void = { _ in }
    ) {
        self.init(
            partition: partition, epoch: epoch, store: store, history: history, replicas: replicas, router: router, owning: false,
            mayAcknowledge: mayAcknowledge, onDeposed: onDeposed, onRecovered: onRecovered, onCommitted: onCommitted)
    }

    /// Starts leading as above on a router of its own bound on `endpoint` with `security`,
    /// stopped with it (a process leading one partition, and the tests).
    /// - Throws: the router's bind error.
    public convenience init(
        partition: String, epoch: Int64, store: any ReplicaStore, history: EpochHistory, replicas: Int,
        context: Context, endpoint: String, security: SocketSecurity = .plaintext,
        mayAcknowledge: @escaping @Sendable () -> Bool, onDeposed: @escaping @Sendable (Int64) -> Void = { _ in },
        onRecovered: @escaping @Sendable () -> Void = {}, onCommitted: @escaping @Sendable (Duration) -> Void = { _ in }
    ) throws {
        self.init(
            partition: partition, epoch: epoch, store: store, history: history, replicas: replicas,
            router: try ReplicationRouter(context: context, endpoint: endpoint, security: security), owning: true,
            mayAcknowledge: mayAcknowledge, onDeposed: onDeposed, onRecovered: onRecovered, onCommitted: onCommitted)
    }

    private init(
        partition: String, epoch: Int64, store: any ReplicaStore, history: EpochHistory, replicas: Int, router: ReplicationRouter, owning: Bool,
        mayAcknowledge: @escaping @Sendable () -> Bool, onDeposed: @escaping @Sendable (Int64) -> Void,
        onRecovered: @escaping @Sendable () -> Void, onCommitted: @escaping @Sendable (Duration) -> Void
    ) {
        self.partition = partition
        self.epoch = epoch
        self.onDeposed = onDeposed
        self.onRecovered = onRecovered
        self.onCommitted = onCommitted
        self.router = router
        ownsRouter = owning
        quorum = QuorumTracker(replicas: replicas, mayAcknowledge: mayAcknowledge)
        machine = LeaderReplica(partition: partition, epoch: epoch, store: store, history: history, quorum: quorum)
        router.attach(self)
    }

    /// Whether recovery is over: the leader's log holds every record a majority had, and its
    /// epoch's start is recorded. Writes may start.
    public var isRecovered: Bool { recovered.withLock { $0 } }

    /// Waits until ``isRecovered`` or `timeout` passes.
    /// - Returns: whether it recovered.
    public func waitUntilRecovered(timeout: Duration) -> Bool {
        recovered.wait(until: { $0 }, deadline: .now + timeout)
    }

    /// The endpoint followers connect to: the router's (with the port the kernel chose for `:*`).
    public var endpoint: String { router.endpoint }

    /// Ships newly appended records now (call after each append), and counts the leader's own
    /// copy once durable; `reply` runs when a majority has the record durable (see ``QuorumTracker``).
    ///
    /// The leader's own fdatasync runs beside the followers', on its journal's acknowledger
    /// thread (registered by the router's pass, once for every write since the last), never on
    /// the caller's: a worker's loop that synced here would hold every reply a majority of
    /// followers already made durable (protocol/replication.md, *The write path*).
    public func replicate(_ pending: PendingWrite, reply: @escaping @Sendable (Bool) -> Void) {
        let started = ContinuousClock.now
        quorum.whenCommitted(pending.sequence) { [onCommitted] acknowledged in
            if acknowledged { onCommitted(ContinuousClock.now - started) }
            reply(acknowledged)
        }
        ownWrite.withLock { last in
            if last.map({ $0.sequence < pending.sequence }) ?? true { last = pending }
        }
        router.wake()
    }

    /// Counts the leader's own copy of the writes given to ``replicate(_:reply:)`` since the last
    /// pass once its journal has them durable, on the router's thread (which runs no batch: the
    /// journal's acknowledger thread syncs, beside the other partitions').
    private func syncOwnWrites() {
        guard let pending = ownWrite.withLock({ last in defer { last = nil }; return last }) else { return }
        pending.whenDurable { [quorum] acknowledgement in quorum.update("leader", durable: acknowledgement.sequence) }
    }

    /// The followers this leadership has heard from, each as of the link's last pass (at most
    /// a tenth of a second old), in node order.
    public var followers: [FollowerProgress] { published.withLock { $0 } }

    /// Stops the link and fails every reply still waiting.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        router.detach(self)
        if ownsRouter { router.stop() }
        quorum.end()
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// The router's pass before it polls: recovery's next step, on the router's thread.
    func prepare(socket: Socket) throws {
        try apply(machine.step(.pass), on: socket)
    }

    /// A message of this partition from the follower `identity`, on the router's thread.
    func handle(_ message: ReplicationMessage, from identity: [UInt8], socket: Socket) throws {
        try apply(machine.step(.message(message, from: identity)), on: socket)
    }

    /// Ships what each follower lacks (an empty append as a heartbeat when `heartbeat`), and
    /// publishes the followers' progress, on the router's thread.
    func ship(socket: Socket, heartbeat: Bool) throws {
        guard machine.phase == .leading else { return }
        syncOwnWrites()
        try apply(machine.step(.ship(heartbeat: heartbeat)), on: socket)
        published.withLock { $0 = machine.progress() }
    }

    /// Appends sent to followers, and the records they carried, by every leader of the process:
    /// records per message is what batching achieves (protocol/replication.md, *What a replicated
    /// write costs*).
    private static let appendsSent = Counter(label: "lyceum_replication_appends_sent_total")
    private static let recordsSent = Counter(label: "lyceum_replication_records_sent_total")

    /// Sends a step's messages and applies its effects.
    private func apply(_ output: LeaderReplica.Output, on socket: Socket) throws {
        for outgoing in output.messages {
            _ = try socket.send(multipart: [outgoing.to] + outgoing.message.frames())
            if case .append(_, _, _, _, _, let records) = outgoing.message, !records.isEmpty {
                Self.appendsSent.increment()
                Self.recordsSent.increment(by: records.count)
            }
        }
        for effect in output.effects {
            switch effect {
            case .recovered:
                recovered.update { $0 = true }
                onRecovered()
            case .deposed(let newer):
                onDeposed(newer)
            }
        }
    }
}
