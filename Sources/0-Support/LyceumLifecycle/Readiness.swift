import LyceumLogging
import Synchronization

/// Whether the process can serve: the conditions it still waits for, or that it is stopping.
/// One answer for `GET /readyz` and for systemd: `READY=1` is sent (through `$NOTIFY_SOCKET`,
/// when set) the first time every condition holds, `STOPPING=1` when draining begins.
public final class Readiness: Sendable {
    /// Every service of the group runs (bound, journals replayed before that): ``ComponentGroup`` meets it.
    public static let started = "started"
    /// A worker is registered with at least one broker (one of its sessions was heartbeated or
    /// served): the worker pool meets it, and withdraws it when no broker accepts any session.
    public static let registered = "registered with a broker"
    /// A replicating worker holds, on every partition it holds a replica of, what the
    /// partition's majority holds (it leads, or follows and has reached its leader's commit):
    /// met once, by the worker's replicas, after a start.
    public static let caughtUp = "caught up on every replica held"

    /// What `/readyz` answers.
    public enum State: Equatable, Sendable {
        /// Every condition holds.
        case ready
        /// These conditions do not hold yet (or no longer).
        case waiting(for: [String])
        /// Draining after SIGTERM or SIGINT: no new work should be sent here.
        case stopping
    }

    private struct Conditions {
        var unmet: [String]
        var stopping = false
        var announced = false
    }

    private let conditions: Mutex<Conditions>
    private let notifier: SystemdNotifier?
    private let logger = Logger(component: "readiness")

    /// Readiness awaiting `conditions` (``started`` and, for a worker, ``registered``), told to
    /// `notifier` (default: systemd's, when the process was started with one).
    public init(awaiting conditions: [String], notifier: SystemdNotifier? = .fromEnvironment()) {
        self.conditions = Mutex(Conditions(unmet: conditions))
        self.notifier = notifier
    }

    /// The state now.
    public var state: State {
        conditions.withLock { current in
            if current.stopping { return .stopping }
            return current.unmet.isEmpty ? .ready : .waiting(for: current.unmet)
        }
    }

    /// `condition` holds (again); the first time every condition holds, `READY=1` is sent.
    public func meet(_ condition: String) {
        let announce = conditions.withLock { current in
            current.unmet.removeAll { $0 == condition }
            guard current.unmet.isEmpty, !current.stopping, !current.announced else { return false }
            current.announced = true
            return true
        }
        if announce { tell("READY=1") }
    }

    /// `condition` no longer holds (a worker whose every broker went silent).
    public func withdraw(_ condition: String) {
        conditions.withLock { current in
            if !current.unmet.contains(condition) { current.unmet.append(condition) }
        }
    }

    /// Draining has begun: not ready from now on, and `STOPPING=1` is sent once.
    public func stop() {
        let first = conditions.withLock { current in
            defer { current.stopping = true }
            return !current.stopping
        }
        if first { tell("STOPPING=1") }
    }

    private func tell(_ state: String) {
        guard let notifier, let failure = notifier.notify(state) else { return }
        logger.warning("systemd notification not sent", ["state": state, "error": failure])
    }
}
