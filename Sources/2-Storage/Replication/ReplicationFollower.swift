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
    /// The commit the leader announced in its last `append` (a heartbeat included) and when it
    /// came: what ``isCaughtUp(within:heardWithin:)`` measures the log against.
    private let announced = Mutex<(commit: UInt64, heard: ContinuousClock.Instant)?>(nil)

    /// Follows the leader of `epoch` at `leaderEndpoint`.
    public init(replica: FollowerReplica, epoch: Int64, context: Context, leaderEndpoint: String, security: SocketSecurity = .plaintext,
                limits: ReplicationMessage.Limits = ReplicationMessage.Limits()) throws {
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
            }, run: { [self] socket in run(socket, epoch: epoch, limits: limits) })
        } catch {
            stopped.store(true, ordering: .relaxed)
            finished.signal()
            throw error
        }
    }

    /// The highest epoch this follower adopted and where its log ends, as of its last message.
    public var progress: (epoch: Int64, position: LogPosition) { published.withLock { $0 } }

    /// Whether the leader was heard within `heardWithin` and this replica's log ends at most
    /// `records` before the commit the leader last announced (heartbeats announce it every
    /// 500 ms): false before the leader's first `append`.
    public func isCaughtUp(within records: UInt64, heardWithin: Duration) -> Bool {
        guard let (commit, heard) = announced.withLock({ $0 }), ContinuousClock.now - heard < heardWithin else { return false }
        return progress.position.sequence + records >= commit
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
    private func answer(_ batch: inout [ReplicationMessage], on socket: Socket) throws {
        guard !batch.isEmpty else { return }
        defer { batch.removeAll(keepingCapacity: true) }
        if let commit = batch.lazy.compactMap(\.announcedCommit).last { announced.withLock { $0 = (commit, .now) } }
        for answer in replica.handle(batch) { _ = try socket.send(multipart: answer.frames(), options: .dontWait) }
        published.withLock { $0 = (replica.history.adopted, replica.position) }
    }

    private func run(_ socket: Socket, epoch: Int64, limits: ReplicationMessage.Limits) {
        defer {
            socket.close()
            finished.signal()
        }
        var poller = Poller()
        do { try poller.add(socket) } catch { return }
        var lastHeard = ContinuousClock.now - .seconds(10)
        while !stopped.load(ordering: .relaxed) {
            do {
                if ContinuousClock.now - lastHeard >= .seconds(1) {
                    _ = try socket.send(multipart: replica.follow(epoch: epoch).frames(), options: .dontWait)
                    published.withLock { $0 = (replica.history.adopted, replica.position) }
                    lastHeard = .now
                }
                try poller.poll(timeout: .milliseconds(100))
                // Everything the leader sent meanwhile is one batch (up to a bound): its appends
                // share one fdatasync and one cumulative ack (FollowerReplica.handle(_:)).
                var batch: [ReplicationMessage] = []
                var batchBytes = 0
                while batchBytes < Self.maxBatchBytes, let frames = try socket.receiveMultipart(options: .dontWait) {
                    lastHeard = .now
                    do {
                        batch.append(try ReplicationMessage(frames: frames, limits: limits))
                        batchBytes += frames.reduce(0) { $0 + $1.count }
                    } catch {
                        try answer(&batch, on: socket)
                        batchBytes = 0
                        logger.warning("refused a message from the leader", ["partition": replica.partition, "error": error.description])
                        let refusal = ReplicationMessage.refuse(partition: replica.partition, epoch: replica.history.adopted, reason: error.code, position: replica.position)
                        _ = try socket.send(multipart: refusal.frames(), options: .dontWait)
                    }
                }
                try answer(&batch, on: socket)
            } catch {
                logger.error("follower link failed", ["partition": replica.partition, "error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }
}

private extension ReplicationMessage {
    /// The commit an `append` announces; `nil` for any other message.
    var announcedCommit: UInt64? {
        guard case .append(_, _, _, let commit, _, _) = self else { return nil }
        return commit
    }
}
