#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The thread that writes the rate limiter's summary lines once a second
/// (``Logger/writeSuppressedSummaries()``). It starts when the first line is refused, so a
/// process that never floods its log never has it, and it sleeps between summaries.
enum SuppressionSummaries {
    private static let started = Atomic<Bool>(false)

    /// How often the summaries are written.
    static let interval = timespec(tv_sec: 1, tv_nsec: 0)

    /// Starts the thread unless it runs already; one atomic load when it does.
    static func start() {
        guard !started.load(ordering: .relaxed), !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { _ in
            // Its own name rather than its creator's (Lifecycle's `Thread.nameCurrent` is out of
            // reach below Lifecycle; `pthread_setname_np` is not exported by Glibc's module map).
            let comm = open("/proc/thread-self/comm", O_WRONLY)
            if comm >= 0 { _ = write(comm, "log-summaries", 13); close(comm) }
            while true {
                var request = SuppressionSummaries.interval
                var remaining = timespec()
                while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
                Logger.writeSuppressedSummaries()
            }
        }, nil)
        // Without the thread, the counts still come out at exit (`writeSuppressedSummaries`).
        if created == 0 { pthread_detach(thread) } else { started.store(false, ordering: .relaxed) }
    }
}
