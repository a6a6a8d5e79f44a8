import Glibc
import LyceumLogging

/// The process's limit on open descriptors (`RLIMIT_NOFILE`), which bounds the connections a
/// broker can accept: libzmq's listener spins on `accept` failing with `EMFILE` once they run out.
enum DescriptorLimit {
    /// Descriptors kept for everything but client connections: journals, pipes, the events
    /// and metrics sockets, libzmq's own.
    static let reserved = 256

    /// Raises the soft limit to the hard one (systemd units set both with `LimitNOFILE=`) and
    /// logs the result.
    /// - Returns: the soft limit now in force.
    static func raise(logger: Logger) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int(FD_SETSIZE) }
        let before = limit.rlim_cur
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 {
                limit = raised
            } else {
                logger.warning("cannot raise the descriptor limit", ["soft": String(before), "hard": String(limit.rlim_max), "errno": String(errno)])
            }
        }
        logger.info("descriptor limit", ["soft": String(limit.rlim_cur), "hard": String(limit.rlim_max), "was": String(before)])
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// `requested`, lowered with a warning when it would leave fewer than ``reserved``
    /// descriptors of `limit` for the rest of the process.
    static func connectionCap(_ requested: Int, limit: Int, logger: Logger) -> Int {
        let fitting = max(1, limit - reserved)
        guard requested > fitting else { return requested }
        logger.warning("max-connections lowered to fit the descriptor limit", [
            "max_connections": String(requested), "now": String(fitting), "descriptor_limit": String(limit),
        ])
        return fitting
    }
}
