#if canImport(Glibc)
import Glibc
#endif

/// The signals a ``ComponentGroup`` owns: SIGINT and SIGTERM stop, SIGHUP reloads.
public enum TerminationSignals {
    static let all: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Blocks the owned signals in the calling thread and in every thread it creates later.
    ///
    /// Call it first in `main`, before anything starts a thread (a ZeroMQ context starts
    /// I/O threads): a signal delivered to a thread that does not block it would kill the
    /// process instead of reaching the group's orderly shutdown. Blocking `SIGPIPE`'s
    /// default action is done here too, since a closed peer must be an error, not an exit.
    public static func blockInAllThreads() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in all { sigaddset(&set, signal) }
        return set
    }

    /// The next owned signal that arrives within `milliseconds`, or `nil`.
    static func next(within milliseconds: Int) -> Int32? {
        var set = signalSet()
        var timeout = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        let signal = sigtimedwait(&set, nil, &timeout)
        return signal > 0 ? signal : nil
    }
}
