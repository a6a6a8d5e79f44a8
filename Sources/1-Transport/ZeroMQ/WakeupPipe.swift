#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking pipe that any thread makes readable, so that a loop waiting on sockets (a
/// ``SocketWaiter`` or ``Poller`` given ``fileDescriptor``) wakes at once: for a shutdown, or for
/// work another thread has queued.
public final class WakeupPipe: Sendable {
    /// The descriptor to poll for readability.
    public let fileDescriptor: Int32
    private let writeEnd: Int32

    /// Opens the pipe, both ends non-blocking and closed on exec.
    /// - Throws: ``ZMQError`` with the `pipe` failure's errno (e.g. too many open files).
    public init() throws(ZMQError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw ZMQError(code: .init(rawValue: errno), operation: "pipe") }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        fileDescriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeEnd)
    }

    /// Makes the pipe readable. Never blocks: a full pipe is already readable, so a refused
    /// write loses nothing.
    public func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, so that the next wait sleeps until the next ``signal()``.
    public func reset() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { read(fileDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
