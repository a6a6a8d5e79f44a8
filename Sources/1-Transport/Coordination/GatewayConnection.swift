import Glibc

/// One HTTP/1.1 connection to an etcd member, on a plain non-blocking POSIX socket: a POST is
/// written, then the response is read through a buffer with a deadline on every wait and a limit
/// on every size. Used by one thread at a time; closed when released.
final class GatewayConnection {
    let endpoint: GatewayEndpoint
    let limits: GatewayLimits
    /// The gateway path of the request in progress, named in errors.
    private(set) var operation: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var bufferStart = 0
    /// Body bytes left in the current chunk of a chunked response; `nil` before the first one.
    private var chunkRemaining: Int?
    private var bodyEnded = false

    /// Connects to `endpoint` within `limits.connectTimeout`.
    init(to endpoint: GatewayEndpoint, limits: GatewayLimits, operation: String) throws(CoordinationError) {
        self.endpoint = endpoint
        self.limits = limits
        self.operation = operation
        fd = -1
        fd = try connect(deadline: .now + limits.connectTimeout)
    }

    deinit { if fd >= 0 { close(fd) } }

    private func failure(_ kind: CoordinationError.Kind, _ detail: String) -> CoordinationError {
        CoordinationError(kind, endpoint: endpoint.description, operation: operation, detail: detail)
    }

    private func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }

    private func connect(deadline: ContinuousClock.Instant) throws(CoordinationError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw failure(.unreachable, "cannot resolve \(endpoint.host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let socketFD = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard socketFD >= 0 else { lastError = errnoText(errno); continue }
            _ = fcntl(socketFD, F_SETFL, fcntl(socketFD, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            setsockopt(socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(socketFD, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return socketFD }
            guard errno == EINPROGRESS else { lastError = errnoText(errno); close(socketFD); continue }
            var ready = false
            do throws(CoordinationError) { ready = try wait(socketFD, for: Int16(POLLOUT), until: deadline) } catch {
                close(socketFD)
                throw error
            }
            guard ready else { close(socketFD); throw failure(.timedOut, "no connection within \(limits.connectTimeout)") }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socketFD, SOL_SOCKET, SO_ERROR, &code, &length)
            if code == 0 { return socketFD }
            lastError = errnoText(code)
            close(socketFD)
        }
        throw failure(.unreachable, lastError)
    }

    /// Waits until `socketFD` is ready for `events` or `deadline` passes (then `false`).
    private func wait(_ socketFD: Int32, for events: Int16, until deadline: ContinuousClock.Instant) throws(CoordinationError) -> Bool {
        while true {
            let left = deadline - .now
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: socketFD, events: events, revents: 0)
            let count = poll(&entry, 1, milliseconds)
            if count > 0 { return true }
            if count < 0, errno != EINTR { throw failure(.connectionLost, "poll: \(errnoText(errno))") }
        }
    }

    /// Writes a POST of `body` (JSON) to `path` with `Connection: close`: every call gets a
    /// connection of its own, so no response can be mistaken for another's.
    func post(_ path: String, body: [UInt8], deadline: ContinuousClock.Instant) throws(CoordinationError) {
        operation = path
        let head = "POST \(path) HTTP/1.1\r\nHost: \(endpoint.host):\(endpoint.port)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        var bytes = Array(head.utf8)
        bytes.append(contentsOf: body)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count > 0 { sent += count; continue }
            guard count < 0, errno == EAGAIN || errno == EINTR else { throw failure(.connectionLost, "send: \(errnoText(errno))") }
            guard try wait(fd, for: Int16(POLLOUT), until: deadline) else { throw failure(.timedOut, "request not sent in time") }
        }
    }

    /// Reads more bytes into the buffer; `false` at the end of the stream.
    private func fill(until deadline: ContinuousClock.Instant) throws(CoordinationError) -> Bool {
        if bufferStart > 0, bufferStart == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            bufferStart = 0
        }
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { buffer.append(contentsOf: chunk[..<count]); return true }
            if count == 0 { return false }
            guard errno == EAGAIN || errno == EINTR else { throw failure(.connectionLost, "recv: \(errnoText(errno))") }
            guard try wait(fd, for: Int16(POLLIN), until: deadline) else { throw failure(.timedOut, "no response in time") }
        }
    }

    private var buffered: Int { buffer.count - bufferStart }

    /// One line ending in CRLF (without it), of at most `limit` bytes.
    private func line(limit: Int, what: String, deadline: ContinuousClock.Instant) throws(CoordinationError) -> [UInt8] {
        // Counted from `bufferStart`: `fill` may move the buffered bytes to the front.
        var scanned = 0
        while true {
            if let end = buffer[(bufferStart + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[bufferStart..<end])
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                bufferStart = end + 1
                return line
            }
            scanned = buffered
            guard buffered <= limit else { throw failure(.responseTooLarge, "\(what) over \(limit) bytes") }
            guard try fill(until: deadline) else { throw failure(.connectionLost, "connection closed in the \(what)") }
        }
    }

    /// Exactly `count` bytes.
    private func bytes(_ count: Int, deadline: ContinuousClock.Instant) throws(CoordinationError) -> ArraySlice<UInt8> {
        while buffered < count {
            guard try fill(until: deadline) else { throw failure(.connectionLost, "connection closed in the body") }
        }
        defer { bufferStart += count }
        return buffer[bufferStart..<bufferStart + count]
    }

    /// The response's status and how its body is framed.
    struct Head {
        var status: Int
        var contentLength: Int?
        var chunked: Bool
    }

    /// Reads the status line and headers (at most `limits.maxHeadBytes` in all).
    func readHead(deadline: ContinuousClock.Instant) throws(CoordinationError) -> Head {
        var total = 0
        let statusLine = try line(limit: limits.maxHeadBytes, what: "response head", deadline: deadline)
        total += statusLine.count
        let parts = statusLine.split(separator: UInt8(ascii: " "), maxSplits: 2)
        guard parts.count >= 2, parts[0].starts(with: Array("HTTP/1.".utf8)), let status = Int(String(decoding: parts[1], as: UTF8.self)) else {
            throw failure(.malformedResponse, "not an HTTP/1.1 status line: \(String(decoding: statusLine.prefix(80), as: UTF8.self))")
        }
        var head = Head(status: status, contentLength: nil, chunked: false)
        while true {
            let header = try line(limit: limits.maxHeadBytes - total, what: "response head", deadline: deadline)
            total += header.count + 2
            guard total <= limits.maxHeadBytes else { throw failure(.responseTooLarge, "response head over \(limits.maxHeadBytes) bytes") }
            if header.isEmpty { break }
            guard let colon = header.firstIndex(of: UInt8(ascii: ":")) else { throw failure(.malformedResponse, "a header line without a colon") }
            let name = String(decoding: header[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: header[(colon + 1)...], as: UTF8.self).trimmingSpaces
            switch name {
            case "content-length":
                guard let length = Int(value), length >= 0 else { throw failure(.malformedResponse, "Content-Length \(value)") }
                head.contentLength = length
            case "transfer-encoding":
                head.chunked = value.lowercased().contains("chunked")
            default: break
            }
        }
        return head
    }

    /// The whole body of a unary response (Content-Length, chunked, or until the connection
    /// closes), at most `limits.maxBodyBytes`.
    func readBody(_ head: Head, deadline: ContinuousClock.Instant) throws(CoordinationError) -> [UInt8] {
        let limit = limits.maxBodyBytes
        if head.chunked {
            var body: [UInt8] = []
            while let piece = try nextChunkBytes(limit: limit - body.count, deadline: deadline) { body.append(contentsOf: piece) }
            return body
        }
        if let length = head.contentLength {
            guard length <= limit else { throw failure(.responseTooLarge, "body of \(length) bytes over \(limit)") }
            return Array(try bytes(length, deadline: deadline))
        }
        while try fill(until: deadline) {
            guard buffered <= limit else { throw failure(.responseTooLarge, "body over \(limit) bytes") }
        }
        defer { bufferStart = buffer.count }
        return Array(buffer[bufferStart...])
    }

    /// The next piece of a chunked body, or `nil` after the last chunk. A piece is at most
    /// `limit` bytes: a larger chunk is an error, not a wait for more memory.
    func nextChunkBytes(limit: Int, deadline: ContinuousClock.Instant) throws(CoordinationError) -> ArraySlice<UInt8>? {
        if bodyEnded { return nil }
        if chunkRemaining == 0 {
            guard try line(limit: 2, what: "chunk end", deadline: deadline).isEmpty else { throw failure(.malformedResponse, "a chunk longer than its size") }
            chunkRemaining = nil
        }
        if chunkRemaining == nil {
            let sizeLine = try line(limit: 256, what: "chunk size", deadline: deadline)
            let digits = sizeLine.prefix { $0 != UInt8(ascii: ";") }
            guard !digits.isEmpty, digits.count <= 15, let size = Int(String(decoding: digits, as: UTF8.self).trimmingSpaces, radix: 16) else {
                throw failure(.malformedResponse, "chunk size \(String(decoding: sizeLine.prefix(32), as: UTF8.self))")
            }
            if size == 0 {
                bodyEnded = true
                return nil
            }
            chunkRemaining = size
        }
        let remaining = chunkRemaining ?? 0
        if buffered == 0 {
            guard try fill(until: deadline) else { throw failure(.connectionLost, "connection closed in a chunk") }
        }
        guard limit > 0 else { throw failure(.responseTooLarge, "response over its limit") }
        let count = min(remaining, buffered, limit)
        chunkRemaining = remaining - count
        defer { bufferStart += count }
        return buffer[bufferStart..<bufferStart + count]
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
