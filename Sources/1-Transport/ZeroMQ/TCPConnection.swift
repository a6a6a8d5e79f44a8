import Glibc

/// One accepted TCP connection of a socket, seen from outside libzmq through its descriptor:
/// what the kernel has received on it and what the peer has acknowledged, and a way to end it.
///
/// libzmq owns the descriptor, so it may be closed and its number reused at any moment; the
/// peer's address, read when the connection is first seen, tells a reused number from the
/// connection itself (``isSameConnection``), and ``cut()`` checks it first.
public struct TCPConnection: Sendable, Equatable {
    /// The descriptor, as libzmq's monitor and message metadata report it.
    public let descriptor: Int32
    /// The peer's address and port as `getpeername` gives them (raw bytes), or `nil` when the
    /// descriptor was no connected TCP socket (IPv4 or IPv6) by the time it was looked at.
    public let peer: [UInt8]?

    /// The connection now behind `descriptor`.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
        peer = Self.peerAddress(of: descriptor)
    }

    /// The kernel's byte counts of the connection (`TCP_INFO`).
    public struct Counters: Sendable, Equatable {
        /// Bytes received from the peer, whether libzmq has read them yet or not.
        public var received: UInt64
        /// Bytes sent that the peer has acknowledged.
        public var acknowledged: UInt64
    }

    // Offsets in Linux's `struct tcp_info` (uapi, append-only since 4.1); glibc's copy of the
    // struct predates these fields.
    private static let acknowledgedOffset = 120
    private static let receivedOffset = 128
    private static let infoSize = 232

    /// The counters, or `nil` when the descriptor is no longer a TCP socket or the kernel is
    /// too old to report them.
    public var counters: Counters? {
        var info = [UInt8](repeating: 0, count: Self.infoSize)
        var length = socklen_t(Self.infoSize)
        let result = info.withUnsafeMutableBytes { getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length) }
        guard result == 0, Int(length) >= Self.receivedOffset + 8 else { return nil }
        return info.withUnsafeBytes { bytes in
            Counters(received: bytes.loadUnaligned(fromByteOffset: Self.receivedOffset, as: UInt64.self),
                     acknowledged: bytes.loadUnaligned(fromByteOffset: Self.acknowledgedOffset, as: UInt64.self))
        }
    }

    /// Whether the descriptor still holds this connection rather than a later one given its number.
    public var isSameConnection: Bool {
        peer != nil && Self.peerAddress(of: descriptor) == peer
    }

    /// Ends the connection in both directions (`shutdown(SHUT_RDWR)`), which libzmq handles as
    /// the peer's disconnection: it closes the descriptor and frees what it held for the
    /// connection, a partial message and queued ones included. Does nothing when the descriptor
    /// no longer holds this connection.
    /// - Returns: whether the connection was cut.
    @discardableResult
    public func cut() -> Bool {
        guard isSameConnection else { return false }
        return shutdown(descriptor, Int32(SHUT_RDWR)) == 0
    }

    private static func peerAddress(of descriptor: Int32) -> [UInt8]? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard result == 0, [AF_INET, AF_INET6].contains(Int32(storage.ss_family)) else { return nil }
        return withUnsafeBytes(of: storage) { Array($0.prefix(Int(length))) }
    }
}
