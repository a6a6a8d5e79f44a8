import Synchronization
import ZeroMQ

/// A one-shot signal that a service's loop waits on alongside its sockets, so that `shutdown()`
/// wakes it at once instead of at its next timeout.
final class Wakeup: Sendable {
    private let pipe: WakeupPipe
    private let signaled = Atomic<Bool>(false)

    init() throws(MajordomoError) {
        do { pipe = try WakeupPipe() } catch { throw MajordomoError(error) }
    }

    /// The descriptor to poll for readability; once signaled it stays readable, which is the point.
    var fileDescriptor: Int32 { pipe.fileDescriptor }

    /// Whether ``signal()`` has been called.
    var isSignaled: Bool { signaled.load(ordering: .acquiring) }

    /// Marks the signal and makes the pipe readable; later calls do nothing.
    func signal() {
        guard !signaled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pipe.signal()
    }
}
