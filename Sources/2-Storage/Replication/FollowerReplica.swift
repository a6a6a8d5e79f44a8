import Journal
import LyceumLogging

/// Where a follower keeps a partition: its journal, and the state the records are applied to.
/// The service that hosts the partition implements it, under the lock that orders its writes.
public protocol ReplicaStore: AnyObject, Sendable {
    /// The partition's journal now (another one after a truncation).
    var journal: Journal { get }
    /// The sequence number of the journal's last record.
    var lastSequence: UInt64 { get }
    /// Appends `record` unchanged (`Journal.appendReplicated`) and applies its changes to the
    /// state, under the store's write lock.
    func append(_ record: ReplicatedRecord) throws -> PendingWrite
    /// Closes the journal, cuts its records after `sequence` (`Journal.truncate`), reopens it
    /// and rebuilds the state from what is left.
    /// - Returns: how many records were cut off.
    func truncate(after sequence: UInt64) throws -> Int
    /// Replaces the journal with the complete journal file staged in `staging` (a rebuild's
    /// image): checks that it replays through record `lastSequence` (else throws, changing
    /// nothing), closes the journal, installs the file (`Journal.install(staged:into:)`, the
    /// commit point), reopens it and replays the state from it.
    func install(staged staging: String, lastSequence: UInt64) throws
}

/// A follower's side of the protocol, without sockets: every message from the leader is
/// checked (epoch, position, records) and answered, and records are acknowledged only once
/// durable here. Owned by one thread (the follower's link).
public final class FollowerReplica {
    /// The partition (`books.p7`).
    public let partition: String
    /// Its store.
    public let store: any ReplicaStore
    /// Its epoch history.
    public let history: EpochHistory
    /// This node's name, said in `follow` so that the leader can name its followers.
    public let node: String
    private let logger = Logger(component: "replication")
    /// The reader of the last `fetch`, and the journal it reads: the next fetch of a recovering
    /// leader goes on from where it stopped instead of scanning the journal again.
    private var fetchTail: (tail: JournalTail, journal: Journal)?
    /// The image a recovering leader behind this replica's snapshot is pulling.
    private var source: SnapshotSource?
    /// The image being received from a leader, while this replica is behind its snapshot.
    private let receiver = SnapshotReceiver()
    /// The most image bytes asked for in one piece.
    private let chunkBytes: Int

    /// Stops a rebuild's install after a step, as a crash would (tests only).
    public var installStepHook: ((SnapshotInstallStep) throws -> Void)? {
        get { receiver.stepHook }
        set { receiver.stepHook = newValue }
    }

    /// The follower of `partition` on node `node`, keeping its records in `store`, its epochs in `history`.
    public init(partition: String, store: any ReplicaStore, history: EpochHistory, node: String = "", chunkBytes: Int = JournalChunk.maxBytes) {
        self.partition = partition
        self.chunkBytes = chunkBytes
        self.store = store
        self.history = history
        self.node = node
    }

    /// Where its log ends.
    public var position: LogPosition {
        let last = store.lastSequence
        return LogPosition(epoch: history.epoch(of: last), sequence: last)
    }

    /// The message that (re)starts following the leader of `epoch`, having adopted `epoch`
    /// (durably): from now on no append of an older epoch is written here. A recovering leader
    /// counts on that when it takes this replica's position for part of its majority.
    public func follow(epoch: Int64) -> ReplicationMessage {
        do { try history.adopt(epoch) } catch {
            logger.error("could not adopt the leader's epoch", ["partition": partition, "epoch": String(epoch), "error": error.description])
        }
        makeDurable()
        return .follow(partition: partition, epoch: history.adopted, position: position, node: node)
    }

    /// Answers one message from the leader: `ack`, `refuse`, or `follow` after a truncation;
    /// `nil` for messages a follower does not take.
    public func handle(_ message: ReplicationMessage) -> ReplicationMessage? {
        handle([message]).first
    }

    /// Answers the messages the leader sent since the link last looked, in order: their appends
    /// are written one after another and made durable by **one** fdatasync, answered by one
    /// cumulative `ack` (protocol/replication.md, *The write path*). Anything else (a refusal, a
    /// truncation, a fetch) first makes the appends before it durable and acknowledges them, so
    /// that no answer ever speaks for records written after it.
    public func handle(_ messages: [ReplicationMessage]) -> [ReplicationMessage] {
        var (answers, unacknowledged) = answer(messages)
        answers += acknowledge(&unacknowledged)
        return answers
    }

    /// The appends at the end of a batch, written and not yet acknowledged: the caller sends
    /// ``ack`` once ``write`` is durable, unless ``generation`` has changed meanwhile (the log
    /// was cut or replaced since: the ack would speak for records it no longer holds).
    public struct Unacknowledged: Sendable {
        /// The last record written.
        public let write: PendingWrite
        /// The epoch of the last append.
        public let epoch: Int64
        /// The replica's ``FollowerReplica/generation`` when it was written.
        public let generation: UInt64
        /// The partition.
        public let partition: String

        /// The acknowledgement to send once ``write`` is durable.
        public var ack: ReplicationMessage { .ack(partition: partition, epoch: epoch, durable: write.sequence) }
    }

    /// How many times the log was cut or replaced (a truncation, a rebuild's install): an
    /// ``Unacknowledged`` of another generation is never sent.
    public private(set) var generation: UInt64 = 0

    /// Answers `messages` as ``handle(_:)-([ReplicationMessage])`` does, except that the
    /// appends at the end are written and not waited for: they are returned unacknowledged, for
    /// the caller to acknowledge once durable without holding its thread (one link serving
    /// several partitions lets their journals sync side by side).
    public func answer(_ messages: [ReplicationMessage]) -> (answers: [ReplicationMessage], unacknowledged: Unacknowledged?) {
        var answers: [ReplicationMessage] = []
        // The appends written and not answered yet.
        var unacknowledged: Unacknowledged?
        for message in messages {
            if case .append(_, let epoch, let previous, _, let epochs, let records) = message {
                if let refusal = append(epoch: epoch, previous: previous, epochs: epochs, records: records) {
                    answers += acknowledge(&unacknowledged)
                    answers.append(refusal)
                } else if let write = store.journal.pendingWrite(sequence: store.lastSequence) {
                    unacknowledged = Unacknowledged(write: write, epoch: epoch, generation: generation, partition: partition)
                }
                continue
            }
            answers += acknowledge(&unacknowledged)
            if let answer = answer(message) { answers.append(answer) }
        }
        return (answers, unacknowledged)
    }

    /// Makes everything written so far durable (the batch's one fdatasync) and says so, in the
    /// epoch of the last append; nothing to say when no append is unanswered, or when the sync
    /// failed: never acknowledged, so the leader never counts this replica for those records (the
    /// journal refuses writes from then on and the process stops: DurableFiles' policy).
    private func acknowledge(_ unacknowledged: inout Unacknowledged?) -> [ReplicationMessage] {
        defer { unacknowledged = nil }
        guard makeDurable(), let pending = unacknowledged else { return [] }
        return [pending.ack]
    }

    /// Waits until the whole log is as durable as the journal's policy promises: what is said
    /// next names the log's end (a `follow`'s or a refusal's position), which the leader counts
    /// as durable here, and appends of earlier batches may still wait for their sync (``answer(_:)``).
    /// - Returns: false when the sync failed.
    @discardableResult
    private func makeDurable() -> Bool {
        do {
            _ = try store.journal.pendingWrite(sequence: store.lastSequence)?.waitUntilDurable()
            return true
        } catch {
            return false
        }
    }

    /// Answers a message other than an append.
    private func answer(_ message: ReplicationMessage) -> ReplicationMessage? {
        switch message {
        case .append:
            return nil
        case .truncate(_, let epoch, let after):
            guard epoch >= history.adopted else { return refuse(.staleEpoch) }
            do {
                try history.adopt(epoch)
                // Records inside the snapshot cannot be cut: this replica must be rebuilt.
                guard after >= store.journal.snapshotSequence else { return refuse(.snapshotNeeded) }
                generation += 1
                let count = try store.truncate(after: after)
                try history.forget(after: after)
                logger.warning("dropped records the leader does not have", ["partition": partition, "after_seq": String(after), "records": String(count), "epoch": String(epoch)])
            } catch {
                logger.error("could not cut the log as the leader asked", ["partition": partition, "error": "\(error)"])
                return refuse(.storage)
            }
            return follow(epoch: epoch)
        case .fetch(_, let epoch, let theirs):
            return fetch(epoch: epoch, from: theirs)
        case .snapshot(_, let epoch, let offset, let size, let end, let epochs, let crc, let bytes):
            guard epoch >= history.adopted else {
                receiver.discard()
                return refuse(.staleEpoch)
            }
            do {
                try history.adopt(epoch)
                if let next = try receiver.accept(offset: offset, size: size, end: end, epochs: epochs, crc: crc, bytes: bytes, directory: history.stagingDirectory) {
                    return .snapshotFetch(partition: partition, epoch: epoch, offset: next, maxBytes: chunkBytes)
                }
                generation += 1
                try receiver.install(into: store, history: history)
            } catch {
                logger.error("could not rebuild from the leader's image", ["partition": partition, "error": error.description])
                return refuse(error.code)
            }
            fetchTail = nil
            logger.info("rebuilt from the leader's journal image", ["partition": partition, "position": position.description, "bytes": String(size)])
            return follow(epoch: epoch)
        case .snapshotFetch(_, let epoch, let offset, let maxBytes):
            guard epoch >= history.adopted else { return refuse(.staleEpoch) }
            do {
                try history.adopt(epoch)
                if offset == 0 { source = SnapshotSource(journal: store.journal, history: history) }
                return try source?.piece(partition: partition, epoch: epoch, at: offset, maxBytes: maxBytes)
            } catch {
                logger.error("could not read the journal image for the recovering leader", ["partition": partition, "error": "\(error)"])
                return refuse(.storage)
            }
        case .follow, .ack, .refuse, .records:
            return nil
        }
    }

    /// The records a recovering leader whose log ends at `theirs` lacks: those after the last
    /// record both logs share (the end, in this log, of `theirs`'s epoch), at most 1024 or 1 MiB.
    private func fetch(epoch: Int64, from theirs: LogPosition) -> ReplicationMessage {
        guard epoch >= history.adopted else { return refuse(.staleEpoch) }
        let last = store.lastSequence
        let common = theirs.sequence <= last && history.epoch(of: theirs.sequence) == theirs.epoch
            ? theirs.sequence : min(theirs.sequence, history.end(of: theirs.epoch, lastSequence: last))
        do {
            try history.adopt(epoch)
            let journal = store.journal
            // Records inside the snapshot cannot be sent one by one: the leader pulls the image.
            guard common >= journal.snapshotSequence else { return refuse(.snapshotNeeded) }
            let tail: JournalTail
            if let cached = fetchTail, cached.journal === journal, cached.tail.sequence == common {
                tail = cached.tail
            } else {
                tail = JournalTail(journal: journal, after: common)
            }
            fetchTail = (tail, journal)
            let records = try tail.next(maxBytes: 1 << 20, maxRecords: ReplicationMessage.Limits().maxRecords)
            let through = records.last?.sequence ?? common
            let starts = history.starts.filter { $0.startSequence > common && $0.startSequence <= through }
            return .records(partition: partition, epoch: epoch, after: common, end: position, epochs: starts, records: records)
        } catch {
            logger.error("could not read records for the recovering leader", ["partition": partition, "error": "\(error)"])
            return refuse(.storage)
        }
    }

    private func refuse(_ reason: ReplicationError.Code) -> ReplicationMessage {
        .refuse(partition: partition, epoch: history.adopted, reason: reason, position: position)
    }

    /// Writes an append's records without waiting for them to be durable.
    /// - Returns: the refusal to send instead, if any.
    private func append(epoch: Int64, previous: LogPosition, epochs: [EpochHistory.Start], records: [ReplicatedRecord]) -> ReplicationMessage? {
        // Fencing: an older leader's records are never written once a newer epoch is adopted.
        guard epoch >= history.adopted else { return refuse(.staleEpoch) }
        guard previous == position else { return refuse(.gap) }
        var expected = previous.sequence + 1
        for record in records {
            guard record.sequence == expected else { return refuse(.gap) }
            expected += 1
        }
        let last = records.last?.sequence ?? previous.sequence
        do {
            try history.adopt(epoch)
            // The leader's starts say which epochs wrote what comes next; ours past our log's end
            // speak for records we do not have.
            if !records.isEmpty { try history.forgetUnwritten(lastSequence: previous.sequence) }
            // An epoch's start is durable before its first record is written.
            for start in epochs where start.startSequence > previous.sequence && start.startSequence <= last && start.epoch <= epoch {
                try history.record(start)
            }
        } catch {
            logger.error("could not record the epoch history", ["partition": partition, "error": "\(error)"])
            return refuse(.storage)
        }
        for record in records {
            do { _ = try store.append(record) } catch let error as JournalError where error.code == .invalidRecord {
                return refuse(.badRecord)
            } catch {
                logger.error("could not append a replicated record", ["partition": partition, "seq": String(record.sequence), "error": "\(error)"])
                return refuse(.storage)
            }
        }
        return nil
    }
}
