import Foundation
import LyceumLogging
import Synchronization
import ZeroMQ

/// A follower's end of the replication channel for one partition, on a thread of its own: a
/// DEALER connected to the leader's endpoint. It says `follow` (again whenever the leader has
/// been silent for a second: a new connection, a lost message), hands every message to its
/// ``FollowerReplica`` and sends the answer back.
public final class ReplicationFollower: @unchecked Sendable {
    /// The replica it feeds.
    public let replica: FollowerReplica
    private let logger = Logger(component: "replication")
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// The epoch adopted and where the log ends, as of the link's last message: read by other
    /// threads (status, metrics) without touching the replica, which is the link's alone.
    private let published: Mutex<(epoch: Int64, position: LogPosition)>
    /// The highest `commit` an append of the adopted epoch said, once one came: how far the
    /// leader's majority had got when it last spoke (``isCaughtUp``).
    private let commitHeard = Mutex<(epoch: Int64, commit: UInt64)?>(nil)

    /// Follows the leader of `epoch` at `leaderEndpoint`, speaking format `version`
    /// (``ReplicationFormat``: the highest both ends read). A leader that answers none of three
    /// `follow`s of a version above the oldest is spoken to in the oldest from then on: it may
    /// be an older build than its published formats said (restarted on one within their lease).
    public init(replica: FollowerReplica, epoch: Int64, context: Context, leaderEndpoint: String, security: SocketSecurity = .plaintext,
                limits: ReplicationMessage.Limits = ReplicationMessage.Limits(), version: Int = ReplicationFormat.oldest) throws {
        self.replica = replica
        published = Mutex((replica.history.adopted, replica.position))
        // The socket is made, connected and used by the link's thread only.
        do {
            try LinkThread.start(name: "follower-\(replica.partition)", open: {
                let socket = try context.socket(.dealer)
                try socket.secure(security)
                try socket.set(.maxMessageSize, to: Int64(limits.maxHeaderBytes + limits.maxRecordBytes + 64 << 10))
                try socket.connect(leaderEndpoint)
                return socket
            }, run: { [self] socket in run(socket, epoch: epoch, limits: limits, version: version) })
        } catch {
            stopped.store(true, ordering: .relaxed)
            finished.signal()
            throw error
        }
    }

    /// The highest epoch this follower adopted and where its log ends, as of its last message.
    public var progress: (epoch: Int64, position: LogPosition) { published.withLock { $0 } }

    /// Whether this replica holds everything the leader had made durable on a majority when it
    /// last spoke: an append (or heartbeat) of the epoch adopted came, and the log reaches its
    /// `commit`. What a worker's readiness waits for on every partition it follows.
    public var isCaughtUp: Bool {
        let (epoch, position) = progress
        guard let heard = commitHeard.withLock({ $0 }), heard.epoch == epoch else { return false }
        return position.sequence >= heard.commit
    }

    /// Stops following (the journal stays open: its owner closes it).
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    /// The most bytes of messages handled as one batch: a bound on what one pass holds in memory
    /// (the leader's window keeps it far below in practice).
    static let maxBatchBytes = 16 << 20

    /// Hands `batch` to the replica, sends its answers, and empties it.
    private func answer(_ batch: inout [ReplicationMessage], on socket: Socket, version: Int) throws {
        guard !batch.isEmpty else { return }
        defer { batch.removeAll(keepingCapacity: true) }
        for answer in replica.handle(batch) { _ = try socket.send(multipart: answer.frames(version: version), options: .dontWait) }
        let adopted = replica.history.adopted
        published.withLock { $0 = (adopted, replica.position) }
        let commit = batch.reduce(nil as UInt64?) { highest, message in
            guard case .append(_, let epoch, _, let commit, _, _) = message, epoch == adopted else { return highest }
            return max(highest ?? 0, commit)
        }
        if let commit {
            commitHeard.withLock { heard in
                let earlier = heard.flatMap { $0.epoch == adopted ? $0.commit : nil } ?? 0
                heard = (adopted, max(commit, earlier))
            }
        }
    }

    private func run(_ socket: Socket, epoch: Int64, limits: ReplicationMessage.Limits, version initialVersion: Int) {
        defer {
            socket.close()
            finished.signal()
        }
        var poller = Poller()
        do { try poller.add(socket) } catch { return }
        var lastHeard = ContinuousClock.now - .seconds(10)
        var version = initialVersion
        // `follow`s sent since the leader last said anything.
        var unanswered = 0
        while !stopped.load(ordering: .relaxed) {
            do {
                if ContinuousClock.now - lastHeard >= .seconds(1) {
                    if unanswered >= 3, version > ReplicationFormat.oldest {
                        logger.warning("the leader answers no follow of this format; speaking the oldest", [
                            "partition": replica.partition, "version": String(version), "now": String(ReplicationFormat.oldest),
                        ])
                        version = ReplicationFormat.oldest
                    }
                    _ = try socket.send(multipart: replica.follow(epoch: epoch).frames(version: version), options: .dontWait)
                    published.withLock { $0 = (replica.history.adopted, replica.position) }
                    lastHeard = .now
                    unanswered += 1
                }
                try poller.poll(timeout: .milliseconds(100))
                // Everything the leader sent meanwhile is one batch (up to a bound): its appends
                // share one fdatasync and one cumulative ack (FollowerReplica.handle(_:)).
                var batch: [ReplicationMessage] = []
                var batchBytes = 0
                while batchBytes < Self.maxBatchBytes, let frames = try socket.receiveMultipart(options: .dontWait) {
                    lastHeard = .now
                    unanswered = 0
                    do {
                        batch.append(try ReplicationMessage(frames: frames, limits: limits))
                        batchBytes += frames.reduce(0) { $0 + $1.count }
                    } catch {
                        try answer(&batch, on: socket, version: version)
                        batchBytes = 0
                        logger.warning("refused a message from the leader", ["partition": replica.partition, "error": error.description])
                        let refusal = ReplicationMessage.refuse(partition: replica.partition, epoch: replica.history.adopted, reason: error.code, position: replica.position)
                        _ = try socket.send(multipart: refusal.frames(version: version), options: .dontWait)
                    }
                }
                try answer(&batch, on: socket, version: version)
            } catch {
                logger.error("follower link failed", ["partition": replica.partition, "error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }
}
