import Foundation
import LyceumLogging
import LyceumSupport
import Synchronization
import ZeroMQ

/// One connection from this process to one leader node, on a thread of its own: a DEALER to the
/// leader's replication endpoint, carrying every partition this process follows there
/// (protocol/replication.md, *One link per leader*). Each partition's messages go to its
/// ``FollowerReplica``; the appends a pass brought are written at once and acknowledged when
/// their journal has them durable, on that journal's acknowledger thread, so the partitions'
/// fdatasyncs run side by side while one thread and one connection serve them all.
final class FollowerLink: @unchecked Sendable {
    let endpoint: String
    private let logger = Logger(component: "replication")
    /// The thread's wake-up, stop and passes (``detach(_:)`` waits for the pass in progress).
    private let control: LinkControl
    private let limits: ReplicationMessage.Limits
    /// The format spoken (the link's thread only): the newest both ends read, until the leader
    /// answers none of three rounds of `follow` in it (it may be an older build than its
    /// published formats said, restarted within their lease), then the oldest.
    private var version: Int
    /// Rounds of `follow` sent since the leader last said anything (the link's thread only).
    private var unanswered = 0
    /// The partitions followed over this link.
    private let entries = Mutex<[String: Entry]>([:])
    /// Acknowledgements made durable on the journals' threads, for the link's thread to send.
    private let outbox = Mutex<[FollowerReplica.Unacknowledged]>([])

    /// The most bytes of messages handled in one pass: a bound on what one pass holds in memory
    /// (the leaders' windows keep it far below in practice).
    static let maxPassBytes = 16 << 20

    /// One partition followed: its replica (touched by the link's thread only), the epoch it
    /// follows, and what other threads may read of it.
    final class Entry: @unchecked Sendable {
        let replica: FollowerReplica
        let epoch: Int64
        /// The epoch adopted and where the log ends, as of the link's last message.
        let published: Mutex<(epoch: Int64, position: LogPosition)>
        /// When the leader last sent this partition anything (the link's thread only).
        var lastHeard = ContinuousClock.now - .seconds(10)
        /// The commit the leader announced in its last `append` (a heartbeat included) and when
        /// it came: what ``ReplicationFollower/isCaughtUp(within:heardWithin:)`` measures the log against.
        let announced = Mutex<(commit: UInt64, heard: ContinuousClock.Instant)?>(nil)

        init(replica: FollowerReplica, epoch: Int64) {
            self.replica = replica
            self.epoch = epoch
            published = Mutex((replica.history.adopted, replica.position))
        }

        func publish() { published.withLock { $0 = (replica.history.adopted, replica.position) } }
    }

    /// Connects to `endpoint` with `security` and starts the thread (no partition yet).
    /// - Throws: the socket's error (a bad endpoint, bad keys).
    init(
        context: Context, endpoint: String, security: SocketSecurity, limits: ReplicationMessage.Limits = ReplicationMessage.Limits(),
        version: Int = ReplicationFormat.oldest
    ) throws {
        self.endpoint = endpoint
        self.limits = limits
        self.version = version
        control = try LinkControl()
        do {
            // The socket is made, connected and used by the link's thread only.
            try LinkThread.start(name: "follower-link", open: {
                let socket = try context.socket(.dealer)
                try socket.secure(security)
                try socket.set(.maxMessageSize, to: Int64(limits.maxHeaderBytes + limits.maxRecordBytes + 64 << 10))
                try socket.connect(endpoint)
                return socket
            }, run: { [self] socket in run(socket) })
        } catch {
            control.finish()
            throw error
        }
    }

    /// Follows `replica`'s partition in `epoch` over this link from the next pass on (it says
    /// `follow` at once).
    func attach(_ entry: Entry) {
        entries.withLock { $0[entry.replica.partition] = entry }
        control.wake()
    }

    /// Stops following `entry`'s partition; once this returns the link's thread never touches
    /// its replica again.
    /// - Returns: how many partitions the link still follows.
    @discardableResult
    func detach(_ entry: Entry) -> Int {
        let left = entries.withLock { table in
            if table[entry.replica.partition] === entry { table[entry.replica.partition] = nil }
            return table.count
        }
        control.awaitPassInProgress()
        return left
    }

    /// Stops the thread and closes the socket.
    func stop() {
        control.stop()
    }

    private func run(_ socket: Socket) {
        defer {
            socket.close()
            control.finish()
        }
        var poller: Poller
        do { poller = try control.started(polling: socket) } catch {
            logger.error("follower link cannot poll", ["endpoint": endpoint, "error": "\(error)"])
            return
        }
        while !control.isStopped {
            do {
                try control.pass { try sayFollow(on: socket) }
                try poller.poll(timeout: .milliseconds(100))
                control.wakeup.reset()
                try control.pass {
                    try sendAcknowledgements(on: socket)
                    try receive(on: socket)
                    // Under `interval` and `none` the appends just written are durable as the
                    // policy promises already: their acks go now, not after another wake-up.
                    try sendAcknowledgements(on: socket)
                }
            } catch {
                logger.error("follower link failed", ["endpoint": endpoint, "error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    /// Says `follow` for every partition the leader has been silent about for a second (a new
    /// connection, a lost message, a partition just attached).
    private func sayFollow(on socket: Socket) throws {
        let now = ContinuousClock.now
        let silent = entries.withLock { $0.values.filter { now - $0.lastHeard >= .seconds(1) } }
        guard !silent.isEmpty else { return }
        if unanswered >= 3, version > ReplicationFormat.oldest {
            logger.warning("the leader answers no follow of this format; speaking the oldest", [
                "endpoint": endpoint, "version": String(version), "now": String(ReplicationFormat.oldest),
            ])
            version = ReplicationFormat.oldest
        }
        unanswered += 1
        for entry in silent {
            try send(entry.replica.follow(epoch: entry.epoch), on: socket)
            entry.publish()
            entry.lastHeard = now
        }
    }

    /// Sends `message` in the link's format.
    private func send(_ message: ReplicationMessage, on socket: Socket) throws {
        _ = try socket.send(multipart: message.frames(version: version), options: .dontWait)
    }

    /// Sends the acknowledgements whose records became durable, unless their partition stopped
    /// being followed here or its log was cut or replaced since they were written.
    private func sendAcknowledgements(on socket: Socket) throws {
        let ready = outbox.withLock { ready in defer { ready.removeAll() }; return ready }
        guard !ready.isEmpty else { return }
        let table = entries.withLock { $0 }
        for unacknowledged in ready {
            guard let entry = table[unacknowledged.partition], entry.replica.generation == unacknowledged.generation else { continue }
            try send(unacknowledged.ack, on: socket)
        }
    }

    /// Everything the leader sent since the last pass (up to a bound), each partition's messages
    /// as one batch for its replica.
    private func receive(on socket: Socket) throws {
        var batches: [String: [ReplicationMessage]] = [:]
        var order: [String] = []
        var bytes = 0
        while bytes < Self.maxPassBytes, let frames = try socket.receiveMultipart(options: .dontWait) {
            bytes += frames.reduce(0) { $0 + $1.count }
            unanswered = 0
            do {
                let message = try ReplicationMessage(frames: frames, limits: limits)
                if batches[message.partition] == nil { order.append(message.partition) }
                batches[message.partition, default: []].append(message)
            } catch {
                try refuse(frames, error, on: socket)
            }
        }
        let table = entries.withLock { $0 }
        let now = ContinuousClock.now
        for partition in order {
            // A partition no longer followed here: its new role's link answers the leader.
            guard let entry = table[partition], let batch = batches[partition] else { continue }
            entry.lastHeard = now
            try answer(batch, for: entry, on: socket)
        }
    }

    /// Hands `batch` to `entry`'s replica, sends its answers, and acknowledges its last appends
    /// once durable (through the outbox, from the journal's thread).
    private func answer(_ batch: [ReplicationMessage], for entry: Entry, on socket: Socket) throws {
        if let commit = batch.lazy.compactMap(\.announcedCommit).last { entry.announced.withLock { $0 = (commit, .now) } }
        let (answers, unacknowledged) = entry.replica.answer(batch)
        for answer in answers { try send(answer, on: socket) }
        entry.publish()
        guard let unacknowledged else { return }
        // A failed sync sends nothing: the leader never counts this replica for those records
        // (the journal refuses writes from then on and the process stops: DurableFiles' policy).
        unacknowledged.write.whenDurable({ [self] _ in
            outbox.withLock { $0.append(unacknowledged) }
            control.wake()
        }, ifFailed: { _ in })
    }

    /// Answers a message that cannot be read with a refusal for its partition, when its header
    /// names one followed here (the leader resends from the position); logs it either way.
    private func refuse(_ frames: [[UInt8]], _ error: ReplicationError, on socket: Socket) throws {
        let partition = frames.first.flatMap { ReplicationMessage.partition(inHeader: $0, limits: limits) }
        logger.warning("refused a message from the leader", ["endpoint": endpoint, "partition": partition ?? "", "error": error.description])
        guard let partition, let entry = entries.withLock({ $0[partition] }) else { return }
        let refusal = ReplicationMessage.refuse(partition: partition, epoch: entry.replica.history.adopted, reason: error.code, position: entry.replica.position)
        try send(refusal, on: socket)
    }
}

private extension ReplicationMessage {
    /// The commit an `append` announces; `nil` for any other message.
    var announcedCommit: UInt64? {
        guard case .append(_, _, _, let commit, _, _) = self else { return nil }
        return commit
    }
}
