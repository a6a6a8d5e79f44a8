#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking pipe that producer threads write to and the publisher's `zmq_poll` waits on,
/// so that a publish or a shutdown wakes the publisher at once.
final class Wakeup: Sendable {
    /// The descriptor to poll for readability.
    let fileDescriptor: Int32
    private let writeEnd: Int32

    init() throws(EventsError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw EventsError(.resourceExhausted, "pipe failed with errno \(errno)") }
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
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, so that the next poll waits for the next ``signal()``.
    func reset() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(fileDescriptor, &buffer, buffer.count) > 0 {}
    }
}
