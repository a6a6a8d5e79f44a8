#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A one-shot signal that another thread's `zmq_poll` can wait on, through the read end of a
/// pipe, so that `shutdown()` wakes a service at once instead of at its next timeout.
final class Wakeup: Sendable {
    /// The descriptor to poll for readability.
    let fileDescriptor: Int32
    private let writeEnd: Int32
    private let signaled = Atomic<Bool>(false)

    init() throws(MajordomoError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw MajordomoError(code: .resourceExhausted, detail: "pipe failed with errno \(errno)")
        }
        // Never read: once signaled the read end stays readable, which is the point.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        fileDescriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeEnd)
    }

    /// Whether ``signal()`` has been called.
    var isSignaled: Bool { signaled.load(ordering: .acquiring) }

    /// Marks the signal and makes the pipe readable; later calls do nothing.
    func signal() {
        guard !signaled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        // One byte into an empty non-blocking pipe cannot fail or block; the flag above is the
        // signal itself, the byte only ends a poll early.
        _ = write(writeEnd, &byte, 1)
    }
}
