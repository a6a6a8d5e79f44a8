import Journal
import LyceumLogging

/// A leader's side of the protocol for one partition, without sockets: the twin of
/// ``FollowerReplica``. ``step(_:at:)`` takes one event (a follower's message, the router's pass
/// before it polls, the pass that ships) and returns the messages to send and the effects its
/// owner applies (protocol/replication.md, *The leader as a state machine*). Owned by one thread
/// (the router's); ``ReplicationLeader`` runs it on the process's ``ReplicationRouter``.
///
/// It **recovers** first (protocol/replication.md, *Fail-over*): once a majority of the replica
/// set (itself included) has said `follow` in its epoch, it takes the greatest of their
/// positions and, if that is not its own, fetches the records it lacks from that follower
/// (cutting its own tail where the logs disagree), then records its epoch's start. **Leading**,
/// it ships the journal's records to each follower from where that follower's log matches its
/// own, within a window of unacknowledged bytes, and counts what each has durable in the
/// ``QuorumTracker``. A follower that refuses it for a newer epoch **deposes** it: from then on
/// it sends nothing.
public final class LeaderReplica {
    /// Where a leadership is: one word per state, as `lyceum status` shows it.
    public enum Phase: Equatable, Sendable {
        /// Gathering a majority's positions and fetching what this log lacks: no write yet.
        case recovering
        /// Recovered: writes go out and are counted.
        case leading
        /// A follower adopted the newer epoch `by`: this leadership is over.
        case deposed(by: Int64)
    }

    /// What the leader is told.
    public enum Event: Sendable {
        /// A message from the follower on connection `from`.
        case message(ReplicationMessage, from: [UInt8])
        /// The router's pass before it polls: recovery's next step (a fetch asked again after a
        /// second without answer), and the followers answered at once when it ends.
        case pass
        /// Ship what each follower lacks; with `heartbeat`, an empty append to those that lack
        /// nothing.
        case ship(heartbeat: Bool)
    }

    /// One message to one follower's connection.
    public struct Outgoing: Equatable, Sendable {
        /// The follower's connection (its ROUTER identity).
        public let to: [UInt8]
        /// The message.
        public let message: ReplicationMessage

        /// `message` to the follower on connection `to`.
        public init(to: [UInt8], _ message: ReplicationMessage) {
            self.to = to
            self.message = message
        }
    }

    /// What the owner does after a step, besides sending.
    public enum Effect: Equatable, Sendable {
        /// Recovery is over: writes may start.
        case recovered
        /// Deposed by a follower of epoch `by`: the waiting writes are failed (the quorum ended).
        case deposed(by: Int64)
    }

    /// A step's outcome: the messages to send, in order, and the effects to apply.
    public struct Output: Equatable, Sendable {
        /// The messages to send, in order.
        public var messages: [Outgoing] = []
        /// The effects, in the order they happened.
        public var effects: [Effect] = []

        /// Nothing to send or apply.
        public init(messages: [Outgoing] = [], effects: [Effect] = []) {
            self.messages = messages
            self.effects = effects
        }
    }

    /// The partition (`books.p7`).
    public let partition: String
    /// The epoch this leadership writes in.
    public let epoch: Int64
    /// Who has what durable, and the replies waiting for a majority.
    public let quorum: QuorumTracker
    /// Where the leadership is.
    public private(set) var phase = Phase.recovering
    private let store: any ReplicaStore
    private let history: EpochHistory
    private let limits: Limits
    private let logger = Logger(component: "replication")
    private var followers: [[UInt8]: Follower] = [:]
    private var recovery = Recovery()
    /// The step's messages and effects, gathered as it goes.
    private var output = Output()

    /// How much the leader sends at once.
    public struct Limits: Sendable {
        /// The most record bytes sent to one follower and not yet acknowledged.
        public var windowBytes = 4 << 20
        /// The most bytes of records in one append.
        public var appendBytes = 1 << 20
        /// The most records in one append.
        public var appendRecords = ReplicationMessage.Limits().maxRecords
        /// The most image bytes in one piece sent to a follower being rebuilt.
        public var chunkBytes = ReplicationMessage.Limits().maxChunkBytes
        /// The most image bytes a recovering leader asks for in one piece: each must fit its
        /// ROUTER's 64 KiB frame limit.
        public var recoveryChunkBytes = 32 << 10
        /// How long a recovering leader waits for its source's answer before asking again.
        public var fetchRetry = Duration.seconds(1)

        /// The defaults: a 4 MiB window of appends of up to 1 MiB or 1024 records.
        public init() {}
    }

    /// The leader of `partition` in `epoch` over `store` and `history`, counting in `quorum`;
    /// it starts recovering.
    public init(partition: String, epoch: Int64, store: any ReplicaStore, history: EpochHistory, quorum: QuorumTracker, limits: Limits = Limits()) {
        self.partition = partition
        self.epoch = epoch
        self.store = store
        self.history = history
        self.quorum = quorum
        self.limits = limits
    }

    /// Takes `event` at time `now`, and returns what to send and what happened. A failure to
    /// read or write this replica's own files is thrown; the messages of the step up to then
    /// are lost with it, as its owner's socket would have lost them.
    public func step(_ event: Event, at now: ContinuousClock.Instant = .now) throws -> Output {
        output = Output()
        defer { output = Output() }
        switch (phase, event) {
        case (.deposed, _):
            break
        case (.recovering, .message(let message, let identity)):
            try recoveryReceive(message, from: identity, now: now)
        case (.leading, .message(let message, let identity)):
            try receive(message, from: identity, now: now)
        case (.recovering, .pass):
            try recover(now: now)
        case (.leading, .ship(let heartbeat)):
            for (identity, follower) in followers { try ship(to: identity, follower, heartbeat: heartbeat) }
        case (.leading, .pass), (.recovering, .ship):
            break
        }
        return output
    }

    /// The followers this leadership has heard from, at `now`, in node order.
    public func progress(at now: ContinuousClock.Instant = .now) -> [FollowerProgress] {
        let last = store.lastSequence
        return followers.values.map { follower in
            let shipped = follower.unacknowledged.reduce(0) { $0 + UInt64($1.bytes) }
            return FollowerProgress(
                node: follower.node, durable: follower.durable, lagRecords: last - min(last, follower.durable),
                lagBytes: follower.tail.bytesBehind + shipped, silence: now - follower.lastHeard)
        }.sorted { $0.node < $1.node }
    }

    /// One follower as the leader sees it.
    private final class Follower {
        let tail: JournalTail
        let node: String
        var durable: UInt64
        var inFlightBytes = 0
        /// The appends shipped and not yet acknowledged: their last sequence and bytes of records.
        var unacknowledged: [(sequence: UInt64, bytes: Int)] = []
        var lastHeard: ContinuousClock.Instant
        /// The image it is being rebuilt from while it is behind the snapshot.
        var source: SnapshotSource?
        init(tail: JournalTail, node: String, durable: UInt64, now: ContinuousClock.Instant) {
            self.tail = tail
            self.node = node
            self.durable = durable
            lastHeard = now
        }
    }

    /// What recovery has learnt: the positions of the followers that adopted this epoch, and
    /// the fetch in progress.
    private struct Recovery {
        var positions: [[UInt8]: LogPosition] = [:]
        /// The node each of them named in its `follow`.
        var nodes: [[UInt8]: String] = [:]
        var source: [UInt8]?
        /// When the last fetch went out; `nil`: the next pass asks at once.
        var fetchSent: ContinuousClock.Instant?
        /// The source's image, when what this leader lacks is inside the source's snapshot.
        let receiver = SnapshotReceiver()
    }

    private func send(_ message: ReplicationMessage, to identity: [UInt8]) {
        output.messages.append(Outgoing(to: identity, message))
    }

    private static func member(_ identity: [UInt8]) -> String {
        identity.map { String($0, radix: 16) }.joined()
    }

    // MARK: Leading

    private func receive(_ message: ReplicationMessage, from identity: [UInt8], now: ContinuousClock.Instant) throws {
        let member = Self.member(identity)
        switch message {
        case .follow(_, let theirs, let position, let node):
            if theirs > epoch { return deposed(by: theirs) }
            // The same node on a new connection (it restarted): its old entry is gone for good.
            for (other, follower) in followers where other != identity && !node.isEmpty && follower.node == node {
                followers.removeValue(forKey: other)
                quorum.remove(Self.member(other))
            }
            let last = store.lastSequence
            // The follower's log matches ours up to the end of its last epoch in our history.
            let matching = position.sequence <= last && history.epoch(of: position.sequence) == position.epoch
            if !matching {
                // Where the logs agree: the follower keeps what its last epoch wrote as far as our
                // log has that epoch. An epoch our history never saw wrote none of our records,
                // and its start in the follower's log is unknown here: its last record goes, and
                // the follower's next `follow` names the epoch before it (each round cuts at
                // least one record, so the two logs meet).
                let known = history.starts.contains { $0.epoch == position.epoch }
                let end = history.end(of: position.epoch, lastSequence: last)
                let keep = known ? min(position.sequence, end) : min(max(position.sequence, 1) - 1, end)
                send(.truncate(partition: partition, epoch: epoch, after: keep), to: identity)
                followers.removeValue(forKey: identity)
                quorum.remove(member)
                return
            }
            followers[identity] = Follower(
                tail: JournalTail(journal: store.journal, after: position.sequence), node: node.isEmpty ? member : node,
                durable: position.sequence, now: now)
            quorum.update(member, durable: position.sequence)
        case .ack(_, let theirs, let durable):
            guard theirs == epoch, let follower = followers[identity] else { return }
            // A follower cannot have durable what was never sent to it: such an ack would count
            // records toward a majority that holds none of them.
            guard durable <= follower.tail.sequence else {
                logger.warning("ignored an acknowledgement past what was sent", [
                    "partition": partition, "node": follower.node, "durable": String(durable), "sent": String(follower.tail.sequence),
                ])
                return
            }
            follower.durable = max(follower.durable, durable)
            // Acknowledgements are cumulative: what was shipped after `durable` is still in flight.
            follower.unacknowledged.removeAll { $0.sequence <= follower.durable }
            follower.inFlightBytes = follower.unacknowledged.reduce(0) { $0 + $1.bytes }
            follower.lastHeard = now
            quorum.update(member, durable: follower.durable)
        case .refuse(_, let theirs, let reason, let position):
            if theirs > epoch { return deposed(by: theirs) }
            if reason == .snapshotNeeded {
                // Its tail to cut is inside its own snapshot: rebuild it from ours.
                let node = followers[identity]?.node ?? member
                let follower = Follower(tail: JournalTail(journal: store.journal, after: position.sequence), node: node, durable: position.sequence, now: now)
                followers[identity] = follower
                return try rebuild(identity, follower)
            }
            logger.info("a follower refused an append; resending from its position", ["partition": partition, "reason": reason.rawValue, "position": position.description])
            let node = followers.removeValue(forKey: identity)?.node ?? ""
            // It sends `follow` again when it hears nothing: start over from there.
            try receive(.follow(partition: partition, epoch: epoch, position: position, node: node), from: identity, now: now)
        case .snapshotFetch(_, let theirs, let offset, let maxBytes):
            guard theirs == epoch, let follower = followers[identity], let source = follower.source else { return }
            guard let piece = try source.piece(partition: partition, epoch: epoch, at: offset, maxBytes: min(maxBytes, limits.chunkBytes)) else { return }
            follower.lastHeard = now
            send(piece, to: identity)
        case .append, .truncate, .fetch, .records, .snapshot:
            return
        }
    }

    /// Starts rebuilding a follower behind the snapshot: an image of the journal now, whose
    /// first piece goes out at once; the follower asks for the rest, installs it, and says
    /// `follow` from its end (protocol/replication.md, *Rebuilding a replica*).
    private func rebuild(_ identity: [UInt8], _ follower: Follower) throws {
        let source = SnapshotSource(journal: store.journal, history: history)
        follower.source = source
        logger.info("rebuilding a follower behind the snapshot from the journal's image", [
            "partition": partition, "follower_seq": String(follower.tail.sequence), "image_end": source.end.description, "bytes": String(source.size),
        ])
        guard let first = try source.piece(partition: partition, epoch: epoch, at: 0, maxBytes: limits.chunkBytes) else { return }
        send(first, to: identity)
    }

    private func ship(to identity: [UInt8], _ follower: Follower, heartbeat: Bool) throws {
        // Being rebuilt: the follower pulls the image's pieces, then says `follow` again.
        guard follower.source == nil else { return }
        while follower.inFlightBytes < limits.windowBytes {
            let previousSequence = follower.tail.sequence
            let records: [ReplicatedRecord]
            do { records = try follower.tail.next(maxBytes: limits.appendBytes, maxRecords: limits.appendRecords) } catch let error as JournalError where error.code == .snapshotNeeded {
                return try rebuild(identity, follower)
            }
            guard !records.isEmpty || heartbeat else { return }
            let last = records.last?.sequence ?? previousSequence
            let starts = history.starts.filter { $0.startSequence > previousSequence && $0.startSequence <= last }
            send(.append(
                partition: partition, epoch: epoch, previous: LogPosition(epoch: history.epoch(of: previousSequence), sequence: previousSequence),
                commit: quorum.committed, epochs: starts, records: records), to: identity)
            if records.isEmpty { return }
            let bytes = records.reduce(0) { $0 + $1.line.count }
            follower.inFlightBytes += bytes
            follower.unacknowledged.append((last, bytes))
        }
    }

    private func deposed(by newer: Int64) {
        logger.warning("deposed: a follower adopted a newer epoch", ["partition": partition, "epoch": String(epoch), "newer": String(newer)])
        phase = .deposed(by: newer)
        quorum.end()
        output.effects.append(.deposed(by: newer))
    }

    // MARK: Recovering

    private var ownPosition: LogPosition {
        let last = store.lastSequence
        return LogPosition(epoch: history.epoch(of: last), sequence: last)
    }

    /// Once a majority has reported: leads if no position is greater than its own, else asks
    /// the follower with the greatest for what it lacks (again after ``Limits/fetchRetry``
    /// without answer).
    private func recover(now: ContinuousClock.Instant) throws {
        guard 1 + recovery.positions.count >= quorum.majority else { return }
        let own = ownPosition
        guard let (identity, greatest) = recovery.positions.max(by: { $0.value < $1.value }), greatest > own else {
            return try finishRecovery(now: now)
        }
        if recovery.source == identity, let sent = recovery.fetchSent, now - sent < limits.fetchRetry { return }
        recovery.source = identity
        recovery.fetchSent = now
        send(.fetch(partition: partition, epoch: epoch, position: own), to: identity)
    }

    private func recoveryReceive(_ message: ReplicationMessage, from identity: [UInt8], now: ContinuousClock.Instant) throws {
        switch message {
        case .follow(_, let theirs, let position, let node):
            if theirs > epoch { return deposed(by: theirs) }
            if theirs == epoch {
                recovery.positions[identity] = position
                recovery.nodes[identity] = node
            }
        case .refuse(_, let theirs, let reason, _):
            if theirs > epoch { return deposed(by: theirs) }
            if reason == .snapshotNeeded, identity == recovery.source { pullImage(from: identity, now: now) }
        case .snapshot(_, let theirs, let offset, let size, let end, let epochs, let crc, let bytes):
            guard theirs == epoch, identity == recovery.source else { return }
            recovery.fetchSent = now
            if let next = try recovery.receiver.accept(offset: offset, size: size, end: end, epochs: epochs, crc: crc, bytes: bytes, directory: history.stagingDirectory) {
                send(.snapshotFetch(partition: partition, epoch: epoch, offset: next, maxBytes: limits.recoveryChunkBytes), to: identity)
                return
            }
            try recovery.receiver.install(into: store, history: history)
            recovery.fetchSent = nil  // fetch what followed the image at once
            logger.info("recovery: installed the source's journal image", ["partition": partition, "position": ownPosition.description, "bytes": String(size)])
        case .records(_, let theirs, let after, let end, let epochs, let records):
            guard theirs == epoch, identity == recovery.source else { return }
            // Our records after `after` are inside our snapshot and cannot be cut: take the source's image.
            if after < store.journal.snapshotSequence { return pullImage(from: identity, now: now) }
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
            recovery.fetchSent = nil  // ask for the next batch at once
            logger.info("recovery: fetched records", ["partition": partition, "records": String(records.count), "position": ownPosition.description, "source_end": end.description])
        case .ack, .append, .truncate, .fetch, .snapshotFetch:
            return
        }
    }

    /// Asks the recovery's source for its journal image from the start.
    private func pullImage(from identity: [UInt8], now: ContinuousClock.Instant) {
        recovery.fetchSent = now
        logger.info("recovery: the records lacking are inside the source's snapshot or ours; pulling its journal image", ["partition": partition])
        send(.snapshotFetch(partition: partition, epoch: epoch, offset: 0, maxBytes: limits.recoveryChunkBytes), to: identity)
    }

    /// Records this epoch's start after everything recovered, and leads: the followers that
    /// adopted the epoch are answered at once, as if they had said `follow` again (writes need
    /// them for a majority, and would otherwise wait for their next `follow`, up to a second away).
    private func finishRecovery(now: ContinuousClock.Instant) throws {
        // Starts past the log's end speak for records it does not have: this epoch's comes next.
        try history.forgetUnwritten(lastSequence: store.lastSequence)
        try history.record(EpochHistory.Start(epoch: epoch, startSequence: store.lastSequence + 1))
        quorum.update("leader", durable: store.lastSequence)
        phase = .leading
        logger.info("recovered: leading", ["partition": partition, "epoch": String(epoch), "position": ownPosition.description])
        output.effects.append(.recovered)
        for (identity, position) in recovery.positions {
            let follow = ReplicationMessage.follow(partition: partition, epoch: epoch, position: position, node: recovery.nodes[identity] ?? "")
            try receive(follow, from: identity, now: now)
        }
    }
}
