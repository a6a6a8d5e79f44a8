#if canImport(Glibc)
import Glibc
#endif

/// One connection of an ``HTTPLoop``, on a non-blocking socket: the request is read up to its
/// empty line (at most ``maxRequestBytes``), then the response is written and the connection
/// closed, or, for a stream, kept open with every chunk appended to what is left to write.
/// Each step does what the socket allows without waiting, so that one slow peer never holds
/// the loop's thread; a stream whose unsent bytes pass the loop's limit is cut.
struct HTTPConnection {
    /// Bytes of request line and headers read before answering regardless.
    static let maxRequestBytes = 16_384

    /// What the connection waits for.
    enum Phase: Equatable {
        /// More of the request.
        case reading
        /// The socket to take more of the response.
        case writing
        /// An open stream: the socket to take what is queued, and more chunks.
        case streaming
        /// Nothing: it is to be closed.
        case done
    }

    let descriptor: Int32
    /// When the exchange must be over; the connection is closed then, whatever its phase. A
    /// stream has none: it lasts until a side closes it or it falls too far behind.
    private(set) var deadline: ContinuousClock.Instant?
    /// When bytes last moved; the idlest connection is the first closed when the loop is full.
    private(set) var lastActivity: ContinuousClock.Instant
    /// When bytes were last queued on a stream, for its keep-alives.
    private(set) var lastQueued: ContinuousClock.Instant
    private(set) var phase = Phase.reading
    /// The position of the last chunk a stream has been given.
    private(set) var position: UInt64 = 0
    private var request: [UInt8] = []
    private var output: [UInt8] = []
    private var sent = 0

    init(descriptor: Int32, accepted: ContinuousClock.Instant, timeout: Duration) {
        self.descriptor = descriptor
        deadline = accepted + timeout
        lastActivity = accepted
        lastQueued = accepted
    }

    /// Bytes queued and not yet taken by the socket.
    var unsent: Int { output.count - sent }

    /// The events to poll for in the current phase: a stream with nothing queued waits for its
    /// peer to close (or to send bytes, which are read and ignored).
    var pollEvents: Int16 {
        switch phase {
        case .writing: Int16(POLLOUT)
        case .streaming: Int16(unsent > 0 ? POLLOUT | POLLIN : POLLIN)
        case .reading, .done: Int16(POLLIN)
        }
    }

    /// Reads what has arrived and, once the request is complete, takes the response from
    /// `responder` and starts writing it.
    mutating func receive(now: ContinuousClock.Instant, responder: some HTTPResponder) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while phase == .reading {
            let received = recv(descriptor, &buffer, min(buffer.count, Self.maxRequestBytes - request.count), Int32(MSG_DONTWAIT))
            if received < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { phase = .done }
                return
            }
            lastActivity = now
            // A peer that closes its side early still gets an answer to what it sent.
            let searchFrom = Swift.max(0, request.count - 3)
            if received > 0 { request += buffer[..<received] }
            if request.count >= Self.maxRequestBytes, !request.containsHeaderEnd(from: 0) {
                output = HTTPResponse.tooLarge
                phase = .writing
            } else if received == 0 || request.containsHeaderEnd(from: searchFrom) {
                switch responder.response(to: HTTPRequest(request)) {
                case .complete(let bytes):
                    output = bytes
                    phase = .writing
                case .stream(let head, let position):
                    output = head
                    self.position = position
                    deadline = nil
                    lastQueued = now
                    phase = received == 0 ? .done : .streaming
                }
            }
            if phase != .reading {
                request = []
                send(now: now)
            }
        }
    }

    /// Reads and drops whatever the peer of a stream sends: a stream takes no requests. A
    /// closed or failed read ends it.
    mutating func discardInput(now: ContinuousClock.Instant) {
        var buffer = [UInt8](repeating: 0, count: 1024)
        // Bounded, so that a peer sending without pause cannot keep the loop here.
        for _ in 0..<16 {
            let received = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                phase = .done
                return
            }
            if received < 0 { return }
            lastActivity = now
        }
    }

    /// Writes as much of the output as the socket takes. A whole response ends the exchange
    /// once sent; a stream stays open.
    mutating func send(now: ContinuousClock.Instant) {
        while phase == .writing || phase == .streaming, sent < output.count {
            let written = output[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { phase = .done }
                break
            }
            sent += written
            lastActivity = now
        }
        if sent == output.count {
            output.removeAll(keepingCapacity: phase == .streaming)
            sent = 0
            if phase == .writing { phase = .done }
        } else if sent >= 65_536 {
            // What was sent is dropped in large steps, so a stream does not copy its queue per write.
            output.removeFirst(sent)
            sent = 0
        }
    }

    /// Queues a chunk at `position` on a stream that has not had it, and cuts the stream when
    /// its unsent bytes would pass `limit`: a peer that stops reading holds at most that much.
    /// - Returns: whether the stream was cut.
    mutating func queue(_ bytes: [UInt8], at position: UInt64, limit: Int, now: ContinuousClock.Instant) -> Bool {
        guard phase == .streaming, position > self.position else { return false }
        self.position = position
        guard unsent + bytes.count <= limit else {
            phase = .done
            return true
        }
        output += bytes
        lastQueued = now
        return false
    }

    /// Queues `bytes` on a stream with nothing queued for `interval`.
    mutating func keepAlive(_ bytes: [UInt8], interval: Duration, now: ContinuousClock.Instant) {
        guard phase == .streaming, unsent == 0, now - lastQueued >= interval else { return }
        output += bytes
        lastQueued = now
    }
}

extension [UInt8] {
    /// Whether `\r\n\r\n` starts at or after `start`: each read searches only what it added.
    fileprivate func containsHeaderEnd(from start: Int) -> Bool {
        count >= 4 && (start..<(count - 3)).contains { self[$0] == 0x0D && self[$0 + 1] == 0x0A && self[$0 + 2] == 0x0D && self[$0 + 3] == 0x0A }
    }
}
