#if canImport(Glibc)
import Glibc
#endif
import LyceumLogging
import LyceumSupport

/// The one HTTP server of the process's endpoints (`/metrics`, the dashboard): the state of an
/// endpoint's thread, which serves every connection through one `poll`, on non-blocking sockets,
/// so that no client can hold it. Each exchange has ``Limits/requestTimeout`` (not per read),
/// at most ``Limits/maxConnections`` are open, and a new one beyond that closes the one idle the
/// longest. Streams (Server-Sent Events) have no timeout, but each holds at most
/// ``Limits/maxStreamBytes`` unsent: a peer that stops reading is cut, never waited for.
/// When the process is out of descriptors, a descriptor kept in reserve is given up to accept
/// one connection at a time; a newcomer then takes the place of the idlest connection, never of
/// one being answered nor of one active in the last ``evictionGrace`` (requests that have
/// arrived are answered first). Past that the loop stops
/// accepting for a growing pause (never a busy loop) and keeps serving the connections it has.
public struct HTTPLoop {
    /// The bounds on an endpoint's connections.
    public struct Limits: Sendable, Equatable {
        /// Connections open at once; a new one beyond them closes the one idle the longest.
        public var maxConnections: Int
        /// Time from accepting a connection to having sent its response; it is closed then.
        public var requestTimeout: Duration
        /// Bytes a stream may have queued unsent; a chunk that would pass them cuts it.
        public var maxStreamBytes: Int
        /// Time without bytes after which a stream is sent the responder's keep-alive.
        public var keepAliveInterval: Duration
        /// The kernel's send buffer of each connection (`SO_SNDBUF`), fixed so that what a peer
        /// that stops reading holds in the kernel is bounded too; `nil` leaves the kernel's
        /// default, which grows with the connection.
        public var sendBufferBytes: Int32?

        /// Limits of `maxConnections` and `requestTimeout`, the others at their defaults unless given.
        public init(maxConnections: Int, requestTimeout: Duration, maxStreamBytes: Int = 131_072,
                    keepAliveInterval: Duration = .seconds(15), sendBufferBytes: Int32? = nil) {
            self.maxConnections = maxConnections
            self.requestTimeout = requestTimeout
            self.maxStreamBytes = maxStreamBytes
            self.keepAliveInterval = keepAliveInterval
            self.sendBufferBytes = sendBufferBytes
        }
    }

    private let listener: Int32
    private let limits: Limits
    private let logger: Logger
    /// What the endpoint is, for logs: `metrics`, `dashboard`.
    private let name: String
    private let clock = ContinuousClock()
    private var connections: [HTTPConnection] = []
    /// `/dev/null`, opened while descriptors are plentiful and closed to make room for one
    /// connection when `accept` finds none (`EMFILE`), so that a request still gets an answer
    /// when connections elsewhere in the process have used them all; -1 while given up.
    private var reserve: Int32 = -1
    /// The connection accepted in the reserve's place; the reserve is taken back when it closes.
    private var reserveHolder: Int32?
    /// Accepting resumes then, after a failure that a retry at once would repeat.
    private var acceptPausedUntil: ContinuousClock.Instant?
    private var acceptPause = Duration.zero

    /// The longest wait in `poll`, so that a shutdown is seen within it.
    static let pollInterval = Duration.milliseconds(100)
    /// The first and the longest pause in accepting after a failure; it doubles in between.
    static let firstAcceptPause = Duration.milliseconds(10)
    static let longestAcceptPause = Duration.seconds(1)
    /// Out of descriptors, how long a connection keeps its place after its last activity
    /// before a newcomer may take it: long enough for a request already sent to arrive.
    static let evictionGrace = Duration.milliseconds(50)

    init(listener: Int32, limits: Limits, name: String, logger: Logger) {
        self.listener = listener
        self.name = name
        self.limits = limits
        self.logger = logger
        takeReserve()
    }

    /// Waits for one of the sockets or the responder's stream wake-up (at most
    /// ``pollInterval``), then reads, writes, queues chunks, closes and accepts what it can
    /// without waiting.
    mutating func turn(responder: some HTTPResponder) {
        var now = clock.now
        if let until = acceptPausedUntil, now >= until { acceptPausedUntil = nil }
        var descriptors = connections.map { pollfd(fd: $0.descriptor, events: $0.pollEvents, revents: 0) }
        let wakeIndex = descriptors.count
        if let wake = responder.streamWakeDescriptor { descriptors.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0)) }
        let accepting = acceptPausedUntil == nil
        if accepting { descriptors.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
        var wake = now + Self.pollInterval
        for connection in connections { if let deadline = connection.deadline { wake = min(wake, deadline) } }
        if let until = acceptPausedUntil { wake = min(wake, until) }
        let ready = poll(&descriptors, nfds_t(descriptors.count), Self.milliseconds(until: wake, from: now))
        now = clock.now
        if ready > 0 {
            // An error or hang-up shows as a failed or empty read or write, which ends the exchange.
            for index in connections.indices where descriptors[index].revents != 0 {
                let events = descriptors[index].revents
                switch connections[index].phase {
                case .reading: connections[index].receive(now: now, responder: responder)
                case .streaming:
                    if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 { connections[index].discardInput(now: now) }
                    connections[index].send(now: now)
                case .writing, .done: connections[index].send(now: now)
                }
            }
        }
        if responder.streamWakeDescriptor != nil, ready > 0, descriptors[wakeIndex].revents != 0 {
            distribute(responder.takeStreamChunks(), now: now)
        }
        for index in connections.indices where connections[index].phase == .streaming {
            connections[index].keepAlive(responder.keepAlive, interval: limits.keepAliveInterval, now: now)
            connections[index].send(now: now)
        }
        closeFinished(now: now)
        if reserve < 0, reserveHolder == nil { takeReserve() }
        if accepting, ready > 0, descriptors[descriptors.count - 1].revents != 0 { acceptWaiting(now: now, responder: responder) }
    }

    /// Queues each chunk on every stream that has not had it, and sends what the sockets take.
    private mutating func distribute(_ chunks: [(position: UInt64, bytes: [UInt8])], now: ContinuousClock.Instant) {
        guard !chunks.isEmpty else { return }
        var cut = 0
        for index in connections.indices where connections[index].phase == .streaming {
            for chunk in chunks {
                if connections[index].queue(chunk.bytes, at: chunk.position, limit: limits.maxStreamBytes, now: now) { cut += 1 }
            }
            connections[index].send(now: now)
        }
        if cut > 0 {
            logger.warning("streams cut: their peers stopped reading", [
                "endpoint": name, "cut": String(cut), "max_unsent_bytes": String(limits.maxStreamBytes),
            ])
        }
    }

    /// Closes every connection, unanswered, and gives back the reserve.
    mutating func closeAll() {
        for connection in connections { Glibc.close(connection.descriptor) }
        connections.removeAll()
        reserveHolder = nil
        if reserve >= 0 { Glibc.close(reserve) }
        reserve = -1
    }

    /// Closes connections that are done or past their deadline.
    private mutating func closeFinished(now: ContinuousClock.Instant) {
        var index = 0
        while index < connections.count {
            let connection = connections[index]
            if connection.phase == .done || connection.deadline.map({ now >= $0 }) == true {
                drop(at: index)
            } else {
                index += 1
            }
        }
    }

    private mutating func drop(at index: Int) {
        let descriptor = connections.remove(at: index).descriptor
        Glibc.close(descriptor)
        if reserveHolder == descriptor {
            reserveHolder = nil
            takeReserve()
        }
    }

    /// Accepts every connection waiting (as many as the limit allows in one turn), closing the
    /// idlest open ones to stay within ``Limits/maxConnections``.
    private mutating func acceptWaiting(now: ContinuousClock.Instant, responder: some HTTPResponder) {
        for _ in 0..<limits.maxConnections {
            var descriptor = acceptNonBlocking()
            if descriptor < 0, errno == EMFILE || errno == ENFILE {
                descriptor = acceptWithoutDescriptors(now: now, responder: responder)
            }
            guard descriptor >= 0 else {
                switch errno {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO: break
                default: pauseAccepting(now: now, reason: errno)
                }
                return
            }
            acceptPause = .zero
            if connections.count >= limits.maxConnections, let idlest = connections.indices.min(by: {
                connections[$0].lastActivity < connections[$1].lastActivity
            }) {
                drop(at: idlest)
            }
            connections.append(HTTPConnection(descriptor: descriptor, accepted: now, timeout: limits.requestTimeout))
        }
    }

    /// Makes room for one descriptor, by closing the idlest connection not being answered when
    /// the reserve is in use or else by giving up the reserve, and accepts again; -1 with `errno`
    /// set when that fails too. Requests that have arrived are read and answered first: a peer
    /// reconnecting in a loop must not close a scrape that needs only its answer written.
    private mutating func acceptWithoutDescriptors(now: ContinuousClock.Instant, responder: some HTTPResponder) -> Int32 {
        for index in connections.indices where connections[index].phase == .reading {
            connections[index].receive(now: now, responder: responder)
        }
        closeFinished(now: now)
        // A connection active within the grace may be a client whose request is still on its
        // way (accepted a moment ago); closing it for a newcomer would let a peer reconnecting in
        // a loop cut every other client before it is read. Without a candidate, accepting pauses.
        let idlest = connections.indices.filter {
            connections[$0].phase != .writing && now - connections[$0].lastActivity >= Self.evictionGrace
        }.min { connections[$0].lastActivity < connections[$1].lastActivity }
        // Closing the reserve's holder takes the reserve back, which is then given up below.
        if reserve < 0, let idlest { drop(at: idlest) }
        let usedReserve = reserve >= 0
        if usedReserve {
            Glibc.close(reserve)
            reserve = -1
        } else if idlest == nil {
            errno = EMFILE
            return -1
        }
        let descriptor = acceptNonBlocking()
        if descriptor >= 0, usedReserve { reserveHolder = descriptor }
        return descriptor
    }

    /// Stops watching the listener for a pause that doubles with each failure in a row: a
    /// listener with connections waiting stays readable, so polling it would spin.
    private mutating func pauseAccepting(now: ContinuousClock.Instant, reason: Int32) {
        acceptPause = min(max(acceptPause * 2, Self.firstAcceptPause), Self.longestAcceptPause)
        acceptPausedUntil = now + acceptPause
        logger.warning("cannot accept a connection; pausing", [
            "endpoint": name, "error": String(cString: strerror(reason)), "pause_ms": String(acceptPause.milliseconds),
            "open_connections": String(connections.count),
        ])
    }

    /// A waiting connection, non-blocking and closed on exec; -1 with `errno` set when none.
    private func acceptNonBlocking() -> Int32 {
        let descriptor = accept(listener, nil, nil)
        guard descriptor >= 0 else { return -1 }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        if var bytes = limits.sendBufferBytes {
            setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        return descriptor
    }

    private mutating func takeReserve() {
        reserve = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    /// Milliseconds from `now` to `instant` for `poll`, rounded up so that a wait never ends early.
    private static func milliseconds(until instant: ContinuousClock.Instant, from now: ContinuousClock.Instant) -> Int32 {
        Int32(clamping: max(0, (instant - now).millisecondsRoundedUp))
    }
}
