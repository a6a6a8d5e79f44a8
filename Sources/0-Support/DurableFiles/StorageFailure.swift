import LyceumLogging
import Synchronization

/// The process's one way out after a sync that acknowledgements depend on has failed (a
/// journal's, an epoch history's): the first failure is logged in one critical line and handed
/// to the handler the process installed (`lyceum`'s stops its components and exits with
/// ``exitStatus``); later ones are only counted. Without a handler (a library, a test), the
/// failure is recorded and logged, and the owner of the file keeps refusing writes.
public enum StorageFailure {
    /// The exit status of a process stopped by a failed sync: 74, `EX_IOERR` of sysexits(3)
    /// ("an error occurred while doing I/O on some file"). A supervisor restarting on it gets a
    /// start that recovers from what the disk holds.
    public static let exitStatus: Int32 = 74

    private struct State {
        var first: DurableFileError?
        var count = 0
        var handler: (@Sendable (DurableFileError) -> Void)?
    }

    private static let state = Mutex(State())
    private static let logger = Logger(component: "storage")

    /// Installs what the process does on the first failure (once per process; a later call
    /// replaces it). Called at once when a failure was already recorded.
    public static func onStop(_ handler: @escaping @Sendable (DurableFileError) -> Void) {
        let recorded = state.withLock { state in
            state.handler = handler
            return state.first
        }
        if let recorded { handler(recorded) }
    }

    /// Reports a failed sync that the process cannot recover from in place; `owner` names what
    /// failed (`journal`, `epoch history`) and `outcome` what its owner did about it (what it
    /// cut back, what it abandoned), in the log line.
    public static func stop(_ error: DurableFileError, owner: String, outcome: String) {
        let (isFirst, handler) = state.withLock { state in
            state.count += 1
            guard state.first == nil else { return (false, nil as (@Sendable (DurableFileError) -> Void)?) }
            state.first = error
            return (true, state.handler)
        }
        guard isFirst else { return }
        logger.critical("a sync failed: stopping; nothing it covered was acknowledged, and the next start recovers from what the disk holds", [
            "owner": owner, "operation": error.operation, "path": error.path, "errno": String(error.systemError),
            "error": error.reason, "outcome": outcome, "exit_status": String(exitStatus),
        ])
        handler?(error)
    }

    /// The first failure reported, if any.
    public static var first: DurableFileError? { state.withLock { $0.first } }
}
