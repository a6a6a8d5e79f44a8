import LyceumLogging
import ZeroMQ

/// Byte budgets and a count limit for the TCP connections of one listening socket (the
/// broker's ROUTER), enforced from outside libzmq, which counts queued messages but not bytes
/// and accepts connections until descriptors run out.
///
/// A monitor reports each accepted connection's descriptor; every received frame carries its
/// connection's descriptor; the kernel counts the bytes received and acknowledged on it
/// (``TCPConnection/counters``). So, per connection:
/// - held for input = bytes received − bytes of the messages the application has taken: a
///   message in progress (libzmq keeps a partial multipart message whole, uncounted by its
///   high-water mark), messages queued unread, and what the kernel has not handed to libzmq yet;
/// - held for output = bytes of the messages sent to it − bytes the peer acknowledged.
/// Past ``Limits/maxInputBytes`` or ``Limits/maxOutputBytes`` the connection is cut
/// (``TCPConnection/cut()``), which libzmq handles as a disconnection and frees what it held.
/// Beyond ``Limits/maxConnections`` a connection is cut as soon as it is accepted, the oldest
/// one that has sent no message yet first, so that descriptors never run out for libzmq.
///
/// Confined to the thread that owns the socket; ``took(from:descriptor:wireBytes:)`` and
/// ``sent(to:wireBytes:)`` are called for every message, ``poll(now:)`` at least by
/// ``nextCheck``.
final class ConnectionGuard {
    /// The limits; every default is documented in `protocol/majordomo.md`.
    struct Limits: Sendable {
        var maxConnections: Int
        var maxInputBytes: UInt64
        var maxOutputBytes: UInt64
    }

    private final class Connection {
        let tcp: TCPConnection
        /// Order of acceptance, telling a queued entry of ``silent`` from a later connection
        /// with the same descriptor.
        let serial: UInt64
        var routingID: [UInt8]?
        @exclusivity(unchecked) var taken: UInt64
        @exclusivity(unchecked) var sent: UInt64 = 0

        init(tcp: TCPConnection, serial: UInt64, taken: UInt64) {
            self.tcp = tcp
            self.serial = serial
            self.taken = taken
        }
    }

    /// Base interval between two looks at every connection's counters; on loopback a peer can
    /// send about 10–20 MB in it, which is the budgets' overshoot.
    static let checkInterval = Duration.milliseconds(10)
    /// Added to the interval per connection, so that looking costs at most about a tenth of a
    /// core whatever the number of connections (one `getsockopt` each).
    static let checkCostPerConnection = Duration.microseconds(10)

    private let limits: Limits
    private let monitor: SocketMonitor
    private let logger: Logger
    // Read or changed for every message, by the one thread that owns the guard: the runtime's
    // exclusivity checks on them guard nothing.
    @exclusivity(unchecked) private var connections: [Int32: Connection] = [:]
    @exclusivity(unchecked) private var descriptorsByID: [[UInt8]: Int32] = [:]
    /// Connections that had sent no message when accepted, oldest first, as cut candidates;
    /// entries of connections that have spoken or gone are skipped when met.
    private var silent = FIFO<(descriptor: Int32, serial: UInt64)>()
    private var serials: UInt64 = 0
    /// What the guard holds and has done, for the broker's published snapshot.
    private(set) var counts = BrokerSnapshot.Connections()
    private(set) var nextCheck: ContinuousClock.Instant

    init(socket: Socket, limits: Limits, logger: Logger, now: ContinuousClock.Instant) throws(ZMQError) {
        self.limits = limits
        self.logger = logger
        monitor = try SocketMonitor(socket, kinds: [.accepted, .disconnected])
        nextCheck = now
    }

    /// Records a message the application took from the connection `descriptor`, sent by `peer`
    /// (read only for a connection's first message).
    /// - Throws: `ZMQError` when the connection monitor cannot be read.
    func took(from peer: @autoclosure () -> [UInt8], descriptor: Int32, wireBytes: UInt64) throws(ZMQError) {
        guard let connection = try connection(descriptor) else { return }
        if connection.routingID == nil {
            let peer = peer()
            connection.routingID = peer
            descriptorsByID[peer] = descriptor
        }
        connection.taken &+= wireBytes
    }

    /// Records a message sent to `peer`, whose connection is known from a message it sent.
    func sent(to peer: [UInt8], wireBytes: UInt64) {
        // Without TCP connections (workers over inproc) there is nothing to count: skip the hashing.
        guard !descriptorsByID.isEmpty, let descriptor = descriptorsByID[peer], let connection = connections[descriptor] else { return }
        connection.sent &+= wireBytes
    }

    /// Once ``nextCheck`` has come, takes the monitor's news of connections accepted and gone,
    /// refusing those beyond the limit, and compares every connection with its budgets.
    ///
    /// The news waits for the check rather than being read on every call: reading it costs a
    /// `zmq_poll` (system calls) on each of the broker's wake-ups, and a few milliseconds of delay
    /// lose nothing. The monitor queues up to `SocketMonitor.eventQueueLimit` events meanwhile,
    /// and a message from a connection not known yet reads the news at once (``took(from:descriptor:wireBytes:)``).
    func poll(now: ContinuousClock.Instant) throws(ZMQError) {
        guard now >= nextCheck else { return }
        try takeEvents()
        for connection in Array(connections.values) { check(connection) }
        nextCheck = now + Self.checkInterval + Self.checkCostPerConnection * connections.count
    }

    // MARK: Connections

    private func takeEvents() throws(ZMQError) {
        while let event = try monitor.next(timeout: .zero) {
            let descriptor = Int32(bitPattern: event.value)
            if event.kind.contains(.accepted) {
                // Closed already, or not TCP (an ipc:// endpoint): nothing to count.
                let tcp = TCPConnection(descriptor: descriptor)
                if tcp.peer != nil { add(tcp) }
            } else if event.kind.contains(.disconnected) {
                remove(descriptor)
            }
        }
        counts.open = connections.count
    }

    /// The connection behind `descriptor`, learning it now when the monitor's event has not
    /// been read yet (or was lost) or when the descriptor was reused by a later connection.
    private func connection(_ descriptor: Int32) throws(ZMQError) -> Connection? {
        if let known = connections[descriptor] { return known }
        try takeEvents()
        if let known = connections[descriptor] { return known }
        let tcp = TCPConnection(descriptor: descriptor)
        guard tcp.peer != nil else { return nil }
        // Nothing is known of what it sent before: count from now.
        return add(tcp, taken: tcp.counters?.received ?? 0)
    }

    @discardableResult
    private func add(_ tcp: TCPConnection, taken: UInt64 = 0) -> Connection {
        remove(tcp.descriptor)
        serials += 1
        let connection = Connection(tcp: tcp, serial: serials, taken: taken)
        connections[tcp.descriptor] = connection
        silent.append((tcp.descriptor, serials))
        // Entries of connections that spoke or went are dropped as they pile up, so that the
        // queue follows the connections held, not all those ever accepted.
        if silent.count > 2 * connections.count + 64 { silent.removeAll { !isSilent($0) } }
        if connections.count > limits.maxConnections { refuseOne() }
        return connection
    }

    private func remove(_ descriptor: Int32) {
        guard let gone = connections.removeValue(forKey: descriptor) else { return }
        if let id = gone.routingID, descriptorsByID[id] == descriptor { descriptorsByID[id] = nil }
    }

    /// Cuts the oldest connection that has sent nothing yet (the one just accepted when all
    /// others have spoken), so that clients already served keep their connections.
    private func refuseOne() {
        while let candidate = silent.popFirst() {
            guard isSilent(candidate), let connection = connections[candidate.descriptor] else { continue }
            remove(candidate.descriptor)
            guard connection.tcp.cut() else { continue }
            counts.refused += 1
            logger.log(.warning, "connection refused: the broker holds its maximum of connections",
                       ["max_connections": String(limits.maxConnections), "refused": String(counts.refused)])
            return
        }
    }

    /// Whether a ``silent`` entry is a connection still held that has sent no message yet.
    private func isSilent(_ entry: (descriptor: Int32, serial: UInt64)) -> Bool {
        guard let connection = connections[entry.descriptor] else { return false }
        return connection.serial == entry.serial && connection.routingID == nil
    }

    // MARK: Budgets

    private func check(_ connection: Connection) {
        // No counters: closed, with the monitor's event not read yet.
        guard let counters = connection.tcp.counters else { return remove(connection.tcp.descriptor) }
        let input = counters.received &- min(counters.received, connection.taken)
        let output = connection.sent &- min(connection.sent, counters.acknowledged)
        if input > limits.maxInputBytes {
            if cut(connection, reason: "input", held: input, limit: limits.maxInputBytes) { counts.cutForInput += 1 }
        } else if output > limits.maxOutputBytes {
            if cut(connection, reason: "output", held: output, limit: limits.maxOutputBytes) { counts.cutForOutput += 1 }
        }
    }

    /// Cuts the connection unless its descriptor now holds a later one (whose counts this
    /// record does not describe); forgets the record either way.
    private func cut(_ connection: Connection, reason: String, held: UInt64, limit: UInt64) -> Bool {
        remove(connection.tcp.descriptor)
        guard connection.tcp.cut() else { return false }
        logger.log(.warning, "connection cut: \(reason) budget exceeded", [
            "peer": connection.routingID.map { PeerText.excerpt($0) } ?? "-", "held_bytes": String(held), "limit_bytes": String(limit),
        ])
        return true
    }
}
