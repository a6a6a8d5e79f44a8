import Foundation
import LyceumLogging
import LyceumSupport
import Synchronization
import ZeroMQ

/// A process's one leader end of the replication channel: a ROUTER bound on the worker's
/// `replication-endpoint` (a CURVE server admitting worker keys, in production), on a thread of
/// its own, serving every partition the process leads. Each message names its partition
/// (`books.p7`, `progress.p7`); the router hands it to that partition's ``ReplicationLeader``,
/// whose checks (epoch, position, checksums) and followers are its own, and lets each leader
/// recover and ship on every pass. Followers of several partitions connect to the one endpoint.
public final class ReplicationRouter: @unchecked Sendable {
    private let logger = Logger(component: "replication")
    /// The thread's wake-up, stop and passes (``detach(_:)`` waits for the pass in progress).
    private let control: LinkControl
    private let bound = Mutex<String?>(nil)
    /// The leaders served, by partition.
    private let leaders = Mutex<[String: ReplicationLeader]>([:])

    /// Binds `endpoint` with `security` and starts serving (no partition yet).
    /// - Throws: the socket's error (an address in use, a bad endpoint).
    public init(context: Context, endpoint: String, security: SocketSecurity = .plaintext) throws {
        control = try LinkControl()
        // The socket is made, bound and used by the router's thread only.
        do {
            try LinkThread.start(name: "replication", open: { [self] in
                let socket = try context.socket(.router)
                try socket.secure(security)
                try socket.set(.maxMessageSize, to: 64 << 10)
                try socket.bind(endpoint)
                let lastEndpoint = try socket.lastEndpoint
                self.bound.withLock { $0 = lastEndpoint }
                return socket
            }, run: { [self] socket in run(socket) })
        } catch {
            control.finish()
            throw error
        }
    }

    /// The endpoint followers connect to (with the port the kernel chose for `:*`).
    public var endpoint: String { bound.withLock { $0 ?? "" } }

    /// Serves `leader`'s partition from the next pass on (a leader of the same partition still
    /// attached is replaced: its owner stops it first).
    func attach(_ leader: ReplicationLeader) {
        leaders.withLock { $0[leader.partition] = leader }
        wake()
    }

    /// Stops serving `leader`; once this returns the router's thread never calls it again.
    func detach(_ leader: ReplicationLeader) {
        leaders.withLock { table in
            if table[leader.partition] === leader { table[leader.partition] = nil }
        }
        // On the router's own thread the pass calls no stopped leader (`step` checks first).
        control.awaitPassInProgress()
    }

    /// Wakes the thread at once (records to ship).
    func wake() { control.wake() }

    /// Stops the thread and closes the socket (the leaders attached are not stopped).
    public func stop() {
        control.stop()
    }

    private func run(_ socket: Socket) {
        defer {
            socket.close()
            control.finish()
        }
        var poller: Poller
        do { poller = try control.started(polling: socket) } catch {
            logger.error("replication link cannot poll", ["error": "\(error)"])
            return
        }
        var lastHeartbeat = ContinuousClock.now
        while !control.isStopped {
            control.pass {
                for leader in leaders.withLock({ Array($0.values) }) { step(leader) { try leader.prepare(socket: socket) } }
            }
            do {
                try poller.poll(timeout: .milliseconds(100))
            } catch {
                logger.error("replication link cannot poll", ["error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.1)
            }
            control.wakeup.reset()
            control.pass {
                do {
                    while let frames = try socket.receiveMultipart(options: .dontWait) {
                        guard frames.count >= 2 else { continue }
                        let message: ReplicationMessage
                        do { message = try ReplicationMessage(frames: Array(frames.dropFirst())) } catch {
                            logger.warning("refused a replication message", ["error": "\(error)"])
                            continue
                        }
                        // A partition not led here (any more): the follower learns the leader from etcd.
                        guard let leader = leaders.withLock({ $0[message.partition] }) else { continue }
                        step(leader) { try leader.handle(message, from: frames[0], socket: socket) }
                    }
                } catch {
                    logger.error("replication link failed", ["error": "\(error)"])
                }
                let heartbeat = ContinuousClock.now - lastHeartbeat >= .milliseconds(500)
                if heartbeat { lastHeartbeat = .now }
                for leader in leaders.withLock({ Array($0.values) }) { step(leader) { try leader.ship(socket: socket, heartbeat: heartbeat) } }
            }
        }
    }

    /// Runs one leader's part of a pass unless it was stopped meanwhile; its failure is its own.
    private func step(_ leader: ReplicationLeader, _ body: () throws -> Void) {
        guard !leader.isStopped else { return }
        do { try body() } catch {
            logger.error("replication link failed", ["partition": leader.partition, "error": "\(error)"])
        }
    }
}
