import Foundation
import Journal
import LyceumLogging
import LyceumSupport
import Synchronization
import ZeroMQ

/// The leader's end of the replication channel for one partition, served by the process's
/// ``ReplicationRouter`` (one ROUTER for every partition the process leads) on its thread.
///
/// It first **recovers** (protocol/replication.md, *Fail-over*): it waits until a majority of
/// the replica set (itself included) has said `follow` in its epoch, takes the greatest of their
/// positions and, if that is not its own, fetches the records it lacks from that follower
/// (cutting its own tail where the logs disagree). Only then does it record its epoch's start
/// and lead: ship the journal's records to each follower from where that follower's log matches
/// its own, count what each has durable in the ``QuorumTracker``, and learn it is deposed from
/// a follower that refuses it for a newer epoch.
public final class ReplicationLeader: @unchecked Sendable {
    /// The partition (`books.p7`).
    public let partition: String
    /// The epoch this leadership writes in.
    public let epoch: Int64
    /// Who has what durable, and the replies waiting for a majority.
    public let quorum: QuorumTracker
    private let store: any ReplicaStore
    private let history: EpochHistory
    private let recovered = Atomic<Bool>(false)
    private let recoveredSignal = DispatchSemaphore(value: 0)
    private let logger = Logger(component: "replication")
    private let router: ReplicationRouter
    /// Whether the router is this leader's alone (made by the initializer taking an endpoint).
    private let ownsRouter: Bool
    private let stopped = Atomic<Bool>(false)
    // The link's state, touched on the router's thread only.
    private var links: [[UInt8]: Follower] = [:]
    private var recovery = Recovery()
    private let onDeposed: @Sendable (Int64) -> Void
    private let onRecovered: @Sendable () -> Void
    private let onCommitted: @Sendable (Duration) -> Void
    /// The last write given to ``replicate(_:reply:)`` whose own durability the router's next
    /// pass waits for.
    private let ownWrite = Mutex<PendingWrite?>(nil)
    /// The followers as of the link's last pass, for other threads (status, metrics).
    private let published = Mutex<[FollowerProgress]>([])
    /// The most record bytes sent to one follower and not yet acknowledged.
    private let windowBytes = 4 << 20
    /// The most image bytes in one piece sent to a follower being rebuilt.
    private let chunkBytes = ReplicationMessage.Limits().maxChunkBytes
    /// The most image bytes a recovering leader asks for in one piece: each must fit its ROUTER's
    /// 64 KiB frame limit.
    private let recoveryChunkBytes = 32 << 10

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
        self.store = store
        self.history = history
        self.onDeposed = onDeposed
        self.onRecovered = onRecovered
        self.onCommitted = onCommitted
        self.router = router
        ownsRouter = owning
        quorum = QuorumTracker(replicas: replicas, mayAcknowledge: mayAcknowledge)
        router.attach(self)
    }

    /// Whether recovery is over: the leader's log holds every record a majority had, and its
    /// epoch's start is recorded. Writes may start.
    public var isRecovered: Bool { recovered.load(ordering: .relaxed) }

    /// Waits until ``isRecovered`` or `timeout` passes.
    /// - Returns: whether it recovered.
    public func waitUntilRecovered(timeout: Duration) -> Bool {
        if isRecovered { return true }
        guard recoveredSignal.wait(timeout: .now() + timeout.seconds) == .success else { return isRecovered }
        recoveredSignal.signal()
        return true
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

    /// One follower as the leader sees it.
    private final class Follower {
        let tail: JournalTail
        let node: String
        var durable: UInt64
        var inFlightBytes = 0
        /// The appends shipped and not yet acknowledged: their last sequence and bytes of records.
        var unacknowledged: [(sequence: UInt64, bytes: Int)] = []
        var lastHeard = ContinuousClock.now
        /// The image it is being rebuilt from while it is behind the snapshot.
        var source: SnapshotSource?
        init(tail: JournalTail, node: String, durable: UInt64) {
            self.tail = tail
            self.node = node
            self.durable = durable
        }
    }

    /// The router's pass, before it polls: recovery's next step, and once recovered the
    /// followers that adopted this epoch answered at once, as if they had just said `follow`
    /// again (writes need them for a majority, and otherwise wait for their next `follow`, up to
    /// a second away).
    func prepare(socket: Socket) throws {
        guard !isRecovered else { return }
        try recover(&recovery, socket: socket)
        if isRecovered {
            for (identity, position) in recovery.positions {
                let follow = ReplicationMessage.follow(partition: partition, epoch: epoch, position: position, node: recovery.nodes[identity] ?? "")
                try receive(follow, from: identity, followers: &links, socket: socket)
            }
        }
    }

    /// A message of this partition from the follower `identity`, on the router's thread.
    func handle(_ message: ReplicationMessage, from identity: [UInt8], socket: Socket) throws {
        if isRecovered {
            try receive(message, from: identity, followers: &links, socket: socket)
        } else {
            try recoveryReceive(message, from: identity, recovery: &recovery, socket: socket)
        }
    }

    /// Ships what each follower lacks (an empty append as a heartbeat when `heartbeat`), and
    /// publishes the followers' progress, on the router's thread.
    func ship(socket: Socket, heartbeat: Bool) throws {
        guard isRecovered else { return }
        syncOwnWrites()
        for (identity, follower) in links { try ship(to: identity, follower, socket: socket, heartbeat: heartbeat) }
        publish(links)
    }

    private func receive(_ message: ReplicationMessage, from identity: [UInt8], followers: inout [[UInt8]: Follower], socket: Socket) throws {
        let member = identity.map { String($0, radix: 16) }.joined()
        switch message {
        case .follow(_, let theirs, let position, let node):
            if theirs > epoch { return deposed(by: theirs) }
            // The same node on a new connection (it restarted): its old entry is gone for good.
            for (other, follower) in followers where other != identity && !node.isEmpty && follower.node == node {
                followers.removeValue(forKey: other)
                quorum.remove(other.map { String($0, radix: 16) }.joined())
            }
            let last = store.lastSequence
            // The follower's log matches ours up to the end of its last epoch in our history.
            let matching = position.sequence <= last && history.epoch(of: position.sequence) == position.epoch
            if !matching {
                let keep = min(position.sequence, history.end(of: position.epoch, lastSequence: last))
                _ = try socket.send(multipart: [identity] + ReplicationMessage.truncate(partition: partition, epoch: epoch, after: keep).frames())
                followers.removeValue(forKey: identity)
                quorum.remove(member)
                return
            }
            followers[identity] = Follower(
                tail: JournalTail(journal: store.journal, after: position.sequence), node: node.isEmpty ? member : node, durable: position.sequence)
            quorum.update(member, durable: position.sequence)
        case .ack(_, let theirs, let durable):
            guard theirs == epoch, let follower = followers[identity] else { return }
            follower.durable = max(follower.durable, durable)
            // Acknowledgements are cumulative: what was shipped after `durable` is still in flight.
            follower.unacknowledged.removeAll { $0.sequence <= follower.durable }
            follower.inFlightBytes = follower.unacknowledged.reduce(0) { $0 + $1.bytes }
            follower.lastHeard = .now
            quorum.update(member, durable: follower.durable)
        case .refuse(_, let theirs, let reason, let position):
            if theirs > epoch { return deposed(by: theirs) }
            if reason == .snapshotNeeded {
                // Its tail to cut is inside its own snapshot: rebuild it from ours.
                let node = followers[identity]?.node ?? member
                let follower = Follower(tail: JournalTail(journal: store.journal, after: position.sequence), node: node, durable: position.sequence)
                followers[identity] = follower
                return try rebuild(identity, follower, socket: socket)
            }
            logger.info("a follower refused an append; resending from its position", ["partition": partition, "reason": reason.rawValue, "position": position.description])
            let node = followers.removeValue(forKey: identity)?.node ?? ""
            // It sends `follow` again when it hears nothing: start over from there.
            try receive(.follow(partition: partition, epoch: epoch, position: position, node: node), from: identity, followers: &followers, socket: socket)
        case .snapshotFetch(_, let theirs, let offset, let maxBytes):
            guard theirs == epoch, let follower = followers[identity], let source = follower.source else { return }
            guard let piece = try source.piece(partition: partition, epoch: epoch, at: offset, maxBytes: min(maxBytes, chunkBytes)) else { return }
            follower.lastHeard = .now
            _ = try socket.send(multipart: [identity] + piece.frames())
        case .append, .truncate, .fetch, .records, .snapshot:
            return
        }
    }

    /// Starts rebuilding a follower behind the snapshot: an image of the journal now, whose
    /// first piece goes out at once; the follower asks for the rest, installs it, and says
    /// `follow` from its end (protocol/replication.md, *Rebuilding a replica*).
    private func rebuild(_ identity: [UInt8], _ follower: Follower, socket: Socket) throws {
        let source = SnapshotSource(journal: store.journal, history: history)
        follower.source = source
        logger.info("rebuilding a follower behind the snapshot from the journal's image", [
            "partition": partition, "follower_seq": String(follower.tail.sequence), "image_end": source.end.description, "bytes": String(source.size),
        ])
        guard let first = try source.piece(partition: partition, epoch: epoch, at: 0, maxBytes: chunkBytes) else { return }
        _ = try socket.send(multipart: [identity] + first.frames())
    }

    /// What recovery has learnt: the positions of the followers that adopted this epoch, and
    /// the fetch in progress.
    private struct Recovery {
        var positions: [[UInt8]: LogPosition] = [:]
        /// The node each of them named in its `follow`.
        var nodes: [[UInt8]: String] = [:]
        var source: [UInt8]?
        var fetchSent = ContinuousClock.now - .seconds(10)
        /// The source's image, when what this leader lacks is inside the source's snapshot.
        let receiver = SnapshotReceiver()
    }

    private var ownPosition: LogPosition {
        let last = store.lastSequence
        return LogPosition(epoch: history.epoch(of: last), sequence: last)
    }

    /// Once a majority has reported: leads if no position is greater than its own, else asks
    /// the follower with the greatest for what it lacks (again after a second without answer).
    private func recover(_ recovery: inout Recovery, socket: Socket) throws {
        guard 1 + recovery.positions.count >= quorum.majority else { return }
        let own = ownPosition
        guard let (identity, greatest) = recovery.positions.max(by: { $0.value < $1.value }), greatest > own else {
            return try finishRecovery()
        }
        guard recovery.source != identity || ContinuousClock.now - recovery.fetchSent >= .seconds(1) else { return }
        recovery.source = identity
        recovery.fetchSent = .now
        _ = try socket.send(multipart: [identity] + ReplicationMessage.fetch(partition: partition, epoch: epoch, position: own).frames())
    }

    private func recoveryReceive(_ message: ReplicationMessage, from identity: [UInt8], recovery: inout Recovery, socket: Socket) throws {
        switch message {
        case .follow(_, let theirs, let position, let node):
            if theirs > epoch { return deposed(by: theirs) }
            if theirs == epoch {
                recovery.positions[identity] = position
                recovery.nodes[identity] = node
            }
        case .refuse(_, let theirs, let reason, _):
            if theirs > epoch { return deposed(by: theirs) }
            if reason == .snapshotNeeded, identity == recovery.source { try pullImage(from: identity, recovery: &recovery, socket: socket) }
        case .snapshot(_, let theirs, let offset, let size, let end, let epochs, let crc, let bytes):
            guard theirs == epoch, identity == recovery.source else { return }
            recovery.fetchSent = .now
            if let next = try recovery.receiver.accept(offset: offset, size: size, end: end, epochs: epochs, crc: crc, bytes: bytes, directory: history.stagingDirectory) {
                _ = try socket.send(multipart: [identity] + ReplicationMessage.snapshotFetch(partition: partition, epoch: epoch, offset: next, maxBytes: recoveryChunkBytes).frames())
                return
            }
            try recovery.receiver.install(into: store, history: history)
            recovery.fetchSent = .now - .seconds(10)  // fetch what followed the image at once
            logger.info("recovery: installed the source's journal image", ["partition": partition, "position": ownPosition.description, "bytes": String(size)])
        case .records(_, let theirs, let after, let end, let epochs, let records):
            guard theirs == epoch, identity == recovery.source else { return }
            // Our records after `after` are inside our snapshot and cannot be cut: take the source's image.
            if after < store.journal.snapshotSequence { return try pullImage(from: identity, recovery: &recovery, socket: socket) }
            if after < store.lastSequence {
                let count = try store.truncate(after: after)
                try history.forget(after: after)
                logger.warning("recovery: dropped records the majority does not have", ["partition": partition, "after_seq": String(after), "records": String(count)])
            }
            try history.forgetUnwritten(lastSequence: store.lastSequence)
            for start in epochs where start.startSequence > after { try history.record(start) }
            var pending: PendingWrite?
            for record in records { pending = try store.append(record) }
            _ = try pending?.waitUntilDurable()
            recovery.positions[identity] = end
            recovery.fetchSent = .now - .seconds(10)  // ask for the next batch at once
            logger.info("recovery: fetched records", ["partition": partition, "records": String(records.count), "position": ownPosition.description, "source_end": end.description])
        case .ack, .append, .truncate, .fetch, .snapshotFetch:
            return
        }
    }

    /// Asks the recovery's source for its journal image from the start.
    private func pullImage(from identity: [UInt8], recovery: inout Recovery, socket: Socket) throws {
        recovery.fetchSent = .now
        logger.info("recovery: the records lacking are inside the source's snapshot or ours; pulling its journal image", ["partition": partition])
        _ = try socket.send(multipart: [identity] + ReplicationMessage.snapshotFetch(partition: partition, epoch: epoch, offset: 0, maxBytes: recoveryChunkBytes).frames())
    }

    /// Records this epoch's start after everything recovered, and leads (the followers that
    /// adopted the epoch are then answered as if they had said `follow` again).
    private func finishRecovery() throws {
        // Starts past the log's end speak for records it does not have: this epoch's comes next.
        try history.forgetUnwritten(lastSequence: store.lastSequence)
        try history.record(EpochHistory.Start(epoch: epoch, startSequence: store.lastSequence + 1))
        quorum.update("leader", durable: store.lastSequence)
        recovered.store(true, ordering: .relaxed)
        recoveredSignal.signal()
        logger.info("recovered: leading", ["partition": partition, "epoch": String(epoch), "position": ownPosition.description])
        onRecovered()
    }

    private func ship(to identity: [UInt8], _ follower: Follower, socket: Socket, heartbeat: Bool) throws {
        // Being rebuilt: the follower pulls the image's pieces, then says `follow` again.
        guard follower.source == nil else { return }
        while follower.inFlightBytes < windowBytes {
            let previousSequence = follower.tail.sequence
            let records: [ReplicatedRecord]
            do { records = try follower.tail.next(maxBytes: 1 << 20, maxRecords: ReplicationMessage.Limits().maxRecords) } catch let error as JournalError where error.code == .snapshotNeeded {
                return try rebuild(identity, follower, socket: socket)
            }
            guard !records.isEmpty || heartbeat else { return }
            let last = records.last?.sequence ?? previousSequence
            let starts = history.starts.filter { $0.startSequence > previousSequence && $0.startSequence <= last }
            let append = ReplicationMessage.append(
                partition: partition, epoch: epoch, previous: LogPosition(epoch: history.epoch(of: previousSequence), sequence: previousSequence),
                commit: quorum.committed, epochs: starts, records: records)
            _ = try socket.send(multipart: [identity] + append.frames())
            let bytes = records.reduce(0) { $0 + $1.line.count }
            follower.inFlightBytes += bytes
            if records.isEmpty { return }
            follower.unacknowledged.append((last, bytes))
        }
    }

    /// Makes the followers' progress readable by other threads: how far each is behind this
    /// leader's journal, in records and in bytes (those shipped and not acknowledged, and those
    /// not shipped yet).
    private func publish(_ followers: [[UInt8]: Follower]) {
        let last = store.lastSequence
        let now = ContinuousClock.now
        let progress = followers.values.map { follower in
            let shipped = follower.unacknowledged.reduce(0) { $0 + UInt64($1.bytes) }
            return FollowerProgress(
                node: follower.node, durable: follower.durable, lagRecords: last - min(last, follower.durable),
                lagBytes: follower.tail.bytesBehind + shipped, silence: now - follower.lastHeard)
        }
        published.withLock { $0 = progress.sorted { $0.node < $1.node } }
    }

    private func deposed(by newer: Int64) {
        logger.warning("deposed: a follower adopted a newer epoch", ["partition": partition, "epoch": String(epoch), "newer": String(newer)])
        quorum.end()
        onDeposed(newer)
    }
}
