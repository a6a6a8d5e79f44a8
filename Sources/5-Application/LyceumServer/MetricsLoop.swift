#if canImport(Glibc)
import Glibc
#endif
import LyceumLogging
import LyceumSupport

/// The state of ``MetricsEndpoint``'s thread: its open connections, the descriptor it keeps in
/// reserve for when the process has none left, and the pause in accepting after a failure.
struct MetricsLoop {
    private let listener: Int32
    private let limits: MetricsEndpoint.Limits
    private let logger: Logger
    private let clock = ContinuousClock()
    private var connections: [MetricsConnection] = []
    /// `/dev/null`, opened while descriptors are plentiful and closed to make room for one
    /// connection when `accept` finds none (`EMFILE`), so that a scrape still gets an answer
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

    init(listener: Int32, limits: MetricsEndpoint.Limits, logger: Logger) {
        self.listener = listener
        self.limits = limits
        self.logger = logger
        takeReserve()
    }

    /// Waits for one of the sockets (at most ``pollInterval``), then reads, writes, closes and
    /// accepts what it can without waiting.
    mutating func turn(render: () -> String) {
        var now = clock.now
        if let until = acceptPausedUntil, now >= until { acceptPausedUntil = nil }
        var descriptors = connections.map { pollfd(fd: $0.descriptor, events: $0.pollEvents, revents: 0) }
        let accepting = acceptPausedUntil == nil
        if accepting { descriptors.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
        var wake = now + Self.pollInterval
        for connection in connections { wake = min(wake, connection.deadline) }
        if let until = acceptPausedUntil { wake = min(wake, until) }
        let ready = poll(&descriptors, nfds_t(descriptors.count), Self.milliseconds(until: wake, from: now))
        now = clock.now
        if ready > 0 {
            // An error or hang-up shows as a failed or empty read or write, which ends the exchange.
            for index in connections.indices where descriptors[index].revents != 0 {
                if connections[index].phase == .reading {
                    connections[index].receive(now: now, render: render)
                } else {
                    connections[index].send(now: now)
                }
            }
        }
        closeFinished(now: now)
        if reserve < 0, reserveHolder == nil { takeReserve() }
        if accepting, ready > 0, descriptors[descriptors.count - 1].revents != 0 { acceptWaiting(now: now) }
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
            if connection.phase == .done || now >= connection.deadline {
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
    /// idlest open ones to stay within ``MetricsEndpoint/Limits/maxConnections``.
    private mutating func acceptWaiting(now: ContinuousClock.Instant) {
        for _ in 0..<limits.maxConnections {
            var descriptor = acceptNonBlocking()
            if descriptor < 0, errno == EMFILE || errno == ENFILE {
                descriptor = acceptWithoutDescriptors()
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
            connections.append(MetricsConnection(descriptor: descriptor, accepted: now, timeout: limits.requestTimeout))
        }
    }

    /// Makes room for one descriptor, by closing the idlest connection when the reserve is in
    /// use or else by giving up the reserve, and accepts again; -1 with `errno` set when that fails too.
    private mutating func acceptWithoutDescriptors() -> Int32 {
        let idlest = connections.indices.min { connections[$0].lastActivity < connections[$1].lastActivity }
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
        logger.warning("cannot accept a metrics connection; pausing", [
            "error": String(cString: strerror(reason)), "pause_ms": String(acceptPause.milliseconds),
            "open_connections": String(connections.count),
        ])
    }

    /// A waiting connection, non-blocking and closed on exec; -1 with `errno` set when none.
    private func acceptNonBlocking() -> Int32 {
        let descriptor = accept(listener, nil, nil)
        guard descriptor >= 0 else { return -1 }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
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
